"""The language model's text: the Python documentation, as Debian's python3-doc package ships it.

Debian's ``python3-doc`` (``apt-get install -y python3-doc``; it pulls ``python3.X-doc``) installs
the documentation's reStructuredText sources under /usr/share/doc/python3.X/html/_sources/, one
``*.rst.txt`` file per page: the tutorial, the library and language references, the HOWTOs, the
FAQs and the "What's New" essays, written by people, in English. Licence: the Python Software
Foundation License (the package's /usr/share/doc/python3.X-doc/copyright; the text's own
license.rst.txt). Nothing of it is committed here: a fresh machine installs the package and
rebuilds the same text.

- ``clean_rst(text)`` turns one page into plain text: prose paragraphs (one per line), headings,
  list items and the text of notes and API entries; code samples, tables, indexes and markup go.
- ``load_documents()`` returns every page as a ``Document`` (its path under _sources/ and its
  clean text), sorted by path; ``split_of(name)`` puts a page in "train" or "heldout" by a hash
  of its path alone, so the split is the same on every machine and for every package version.
- ``token_stream(ids_per_document)`` joins tokenised pages with <|endoftext|> (GPT-2's
  separator); ``sample_windows`` draws training windows from it, each led by that token as BOS; some of them
  may hold one passage of their own text written a second time (``repeat_spans``: random length and
  places), where copying is the best prediction.
"""

from __future__ import annotations

import glob
import hashlib
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PACKAGE = "python3-doc"
LICENCE = "Python Software Foundation License"
SOURCE_GLOB = "/usr/share/doc/python3*/html/_sources"
EOT = "<|endoftext|>"
HELDOUT_PERCENT = 10  # of the pages, chosen by the hash of their path

# Directives whose argument and body are prose (API entries, notes); any other directive
# (code, tables, indexes, toctrees, grammar, images, includes) is dropped with its body.
_PROSE_DIRECTIVES = frozenset("""
note warning seealso attention caution important tip hint danger error admonition impl-detail topic sidebar rubric
glossary only centered function method class attribute data exception decorator decoratormethod classmethod
staticmethod abstractmethod coroutinefunction coroutinemethod awaitablefunction property describe envvar option
cmdoption opcode pdbcommand module currentmodule
c:function c:type c:member c:macro c:var c:data c:struct c:union c:enum c:enumerator
""".split())
_VERSION_DIRECTIVES = {"versionadded": "New in version {}.", "versionchanged": "Changed in version {}:",
                       "deprecated": "Deprecated since version {}:", "deprecated-removed": "Deprecated since version {}:"}
_SILENT_ARGUMENT = frozenset({"module", "currentmodule", "only", "glossary", "note", "warning", "seealso"})

_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}$")
_SIMPLE_TABLE = re.compile(r"^=+(\s+=+)+$")
_BULLET = re.compile(r"^([*+-]|#\.|\d+\.|\(?[a-z0-9]\))\s+")
_ROLE_WITH_TARGET = re.compile(r":[\w:+-]+:`([^`<]*?)\s*<[^`>]*>`")
_ROLE = re.compile(r":([\w:+-]+):`!?(~?)([^`]*)`")
_NUMBERED_ROLES = {"pep": "PEP ", "rfc": "RFC ", "issue": "issue ", "gh": "gh-", "source": ""}
# The inline markup left after the roles, each replaced by the text it shows, in this order: literals, links,
# named references, default roles, strong, emphasis, footnotes (dropped) and substitutions.
_INLINE = tuple((re.compile(pattern), shown) for pattern, shown in (
    (r"``(.+?)``", r"\1"), (r"`([^`<]*?)\s*<[^`>]*>`__?", r"\1"), (r"`([^`]+)`__?", r"\1"), (r"`([^`]+)`", r"\1"),
    (r"\*\*(\S(?:.*?\S)?)\*\*", r"\1"), (r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])", r"\1"),
    (r"\s*\[(#\w*|\d+|\*)\]_", ""), (r"\|(\w[\w -]*)\|", r"\1"),
))
_LABEL = re.compile(r"^\.\.\s+_([^:]+):$")


@dataclass(frozen=True)
class Document:
    """One page of the documentation: its path under _sources/ (e.g. "tutorial/classes") and clean text."""

    name: str
    text: str


def find_sources(pattern: str = SOURCE_GLOB) -> Path:
    """Returns the newest installed _sources/ folder; SystemExit with one line when none is installed."""
    found = sorted(Path(p) for p in glob.glob(pattern) if Path(p, "tutorial").is_dir())
    if not found:
        raise SystemExit(f"the language model's text is Debian's {PACKAGE} (the Python documentation, "
                         f"{LICENCE}), not installed here: run `apt-get install -y {PACKAGE}`")
    return found[-1]


def split_of(name: str) -> str:
    """Returns "heldout" for about HELDOUT_PERCENT % of page names (by SHA-256 of the name), else "train"."""
    digest = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")
    return "heldout" if digest % 100 < HELDOUT_PERCENT else "train"


def _role_text(match: re.Match, labels: Mapping[str, str]) -> str:
    role, short, text = match.groups()
    if role == "ref":
        return labels.get(text, text.replace("-", " "))
    if short:
        return text.rsplit(".", 1)[-1]
    return _NUMBERED_ROLES.get(role, "") + text


def inline_text(line: str, labels: Mapping[str, str] | None = None) -> str:
    """Returns one line with reST inline markup replaced by the text it shows; labels: {ref label:
    section title} for :ref:`label` without a title."""
    line = _ROLE_WITH_TARGET.sub(r"\1", line)
    line = _ROLE.sub(lambda m: _role_text(m, labels or {}), line)
    for pattern, shown in _INLINE:
        line = pattern.sub(shown, line)
    return line.replace("\\ ", "").replace("\\", "")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: Sequence[str], start: int, indent: int) -> int:
    # The first line after `start` that is not blank and indented no deeper than `indent`.
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    return end


def _prose_lines(lines: Sequence[str]) -> list[str]:
    # Lines of prose, markup still inline, with directives and literal blocks resolved; "" between paragraphs.
    out: list[str] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        line, indent = raw.strip(), _indent(raw)
        if not line:
            out.append("")
            i += 1
            continue
        directive = _DIRECTIVE.match(line)
        if line.startswith(".."):
            end = _block_end(lines, i, indent)
            if directive and directive.group(1) in _VERSION_DIRECTIVES:
                body = _prose_lines(textwrap.dedent("\n".join(lines[i + 1 : end])).splitlines())
                out += ["", _VERSION_DIRECTIVES[directive.group(1)].format(directive.group(2).split()[0]
                                                                          if directive.group(2) else "")]
                out += [b for b in body if not b.startswith(":")] + [""]
            elif directive and directive.group(1) in _PROSE_DIRECTIVES:
                body = textwrap.dedent("\n".join(lines[i + 1 : end])).splitlines()
                body = [b for b in body if not re.match(r"^:[\w-]+:(\s|$)", b.strip())]  # directive options
                head = [] if directive.group(1) in _SILENT_ARGUMENT else [directive.group(2)]
                out += ["", *head, "", *_prose_lines(body), ""]
            i = end  # comments, labels, substitutions and other directives go with their bodies
            continue
        if line.startswith(">>>"):  # a doctest block runs to the next blank line
            while i < len(lines) and lines[i].strip():
                i += 1
            continue
        if _ADORNMENT.match(line) or _SIMPLE_TABLE.match(line) or line[0] in "+|":
            i += 1
            continue
        if line.endswith("::"):  # a literal block follows: keep the sentence, drop the code
            kept = line[:-2].rstrip()
            if kept:
                out.append(kept + (":" if not line.endswith(" ::") else ""))
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            i = _block_end(lines, j - 1, indent) if j < len(lines) and _indent(lines[j]) > indent else i + 1
            out.append("")
            continue
        out.append(line)
        i += 1
    return out


def section_labels(text: str) -> dict[str, str]:
    """Returns {label: title} for every `.. _label:` right before a section heading of one page."""
    lines = [line.strip() for line in text.splitlines()]
    labels = {}
    for i, line in enumerate(lines):
        label = _LABEL.match(line)
        if not label:
            continue
        following = [x for x in lines[i + 1 : i + 6] if x and not _LABEL.match(x)]
        if following and _ADORNMENT.match(following[0]):  # an overlined heading
            following = following[1:]
        if len(following) > 1 and _ADORNMENT.match(following[1]):
            labels[label.group(1)] = inline_text(following[0])
    return labels


def clean_rst(text: str, labels: Mapping[str, str] | None = None) -> str:
    """Returns the plain text of one reST page: one paragraph, heading or list item per line.
    labels: {ref label: section title} across the pages (section_labels), for untitled :ref:s."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in _prose_lines(text.replace("\t", "    ").splitlines()) + [""]:
        if not line or _BULLET.match(line):
            if current:
                paragraphs.append(" ".join(current))
            current = [line] if line else []
        else:
            current.append(line)
    cleaned = (re.sub(r"\s+", " ", inline_text(p, labels)).strip() for p in paragraphs)
    return "\n".join(p for p in cleaned if p and re.search(r"[A-Za-z]", p))


def load_documents(root: Path | None = None) -> list[Document]:
    """Returns every page under root (default: the installed python3-doc's _sources/), cleaned, by path."""
    root = find_sources() if root is None else Path(root)
    pages = {path.relative_to(root).as_posix().removesuffix(".rst.txt"): path.read_text(encoding="utf-8", errors="replace")
             for path in sorted(root.rglob("*.rst.txt"))}
    labels = {k: v for raw in pages.values() for k, v in section_labels(raw).items()}
    docs = []
    for name, raw in pages.items():
        text = clean_rst(raw, labels)
        if text:
            docs.append(Document(name, text))
    return docs


def split_documents(docs: Iterable[Document]) -> dict[str, list[Document]]:
    """Returns {"train": [...], "heldout": [...]}, each in the input's order."""
    out: dict[str, list[Document]] = {"train": [], "heldout": []}
    for doc in docs:
        out[split_of(doc.name)].append(doc)
    return out


def token_stream(ids_per_document: Iterable[Sequence[int]], eot: int) -> np.ndarray:
    """Returns int32 [N]: <|endoftext|> doc <|endoftext|> doc ... <|endoftext|>, GPT-2's layout."""
    parts = [np.asarray([eot], np.int32)]
    for ids in ids_per_document:
        parts += [np.asarray(ids, np.int32), np.asarray([eot], np.int32)]
    return np.concatenate(parts)


def sample_windows(rng: np.random.Generator, stream: np.ndarray, batch: int, length: int, bos: int,
                   repeated: int = 0, span: tuple[int, int] | None = None) -> np.ndarray:
    """Returns int32 [batch, length]: [BOS] + stream[s : s + length − 1] for random starts s.

    The first `repeated` rows hold a passage of the window's own text written a second time. With
    span None: the first (length − 1) // 2 tokens twice ([BOS] + p + p, and the token after p's first
    copy when length − 1 is odd). With span (lo, hi): see repeat_spans (a passage of lo..hi tokens,
    copied to a random later place), so that only matching content, not a fixed offset, finds it."""
    starts = rng.integers(0, len(stream) - (length - 1), size=batch)
    body = stream[starts[:, None] + np.arange(length - 1)[None, :]]
    if span is not None:
        return np.concatenate([np.full((batch, 1), bos, np.int32), repeat_spans(rng, body, repeated, *span)], axis=1)
    half = (length - 1) // 2
    body[:repeated, half : 2 * half] = body[:repeated, :half]
    return np.concatenate([np.full((batch, 1), bos, np.int32), body], axis=1)


def repeat_spans(rng: np.random.Generator, body: np.ndarray, rows: int, lo: int, hi: int) -> np.ndarray:
    """Returns body [B, N] with, in each of its first `rows` rows, one passage of n tokens (n uniform in
    lo..hi, at most N // 2) copied from a random place a to a random later place b ≥ a + n, overwriting
    the text there: row[b : b + n] = row[a : a + n]. The rest of the row keeps its own text."""
    body = np.array(body, copy=True)
    width = body.shape[1]
    for row in range(min(rows, len(body))):
        n = int(rng.integers(min(lo, width // 2), min(hi, width // 2) + 1))
        a = int(rng.integers(0, width - 2 * n + 1))
        b = int(rng.integers(a + n, width - n + 1))
        body[row, b : b + n] = body[row, a : a + n]
    return body


def eval_windows(stream: np.ndarray, length: int, bos: int, limit: int | None = None) -> np.ndarray:
    """Returns int32 [W, length]: consecutive non-overlapping [BOS] + stream chunks of length − 1 (the
    last partial chunk dropped), the first `limit` of them; every stream token but the first is
    predicted once."""
    step = length - 1
    count = (len(stream) - 1) // step
    if limit is not None:
        count = min(count, limit)
    body = stream[: count * step].reshape(count, step)
    return np.concatenate([np.full((count, 1), bos, np.int32), body], axis=1)
