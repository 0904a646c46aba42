"""The tokenizers of translation folders, source and target, each giving ids and the pieces they stand for.

- Marian (opus-mt: source.spm, target.spm, vocab.json, no tokenizer.json): as transformers' MarianTokenizer
  reads them. The text of a special token (</s>, <unk>, <pad>) is that token; between them, a leading
  language code (">>zho<<") is kept whole and the rest is cut into pieces by the source
  (or, for a target, the target) sentencepiece model; each piece's id is its entry in vocab.json (or in
  target_vocab.json where the folder has separate vocabularies), a piece missing there is <unk>; </s> is
  appended. MarianTokenizer's Moses punctuation normaliser runs only where sacremoses is installed; it is not
  applied here.
- T5, BART, mBART: the folder's tokenizer.json read as is, its post-processor included (</s>, <s>, a language
  code), for the source and the target alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from models.record import InputError
from models.text import N_, Notice
from models.translation.config import json_object


@dataclass(frozen=True)
class Tokens:
    """One text read by a tokenizer: ids, the piece each stands for, and the pieces the vocabulary lacks."""

    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    unknown: tuple[str, ...] = ()


class MarianPieces:
    """Marian's two sentencepiece models and joint (or separate) vocabulary."""

    def __init__(self, folder: Path):
        try:
            import sentencepiece
        except ImportError:
            raise InputError("a Marian folder is read with sentencepiece: pip install sentencepiece") from None

        self.source, self.target = (_spm(sentencepiece, folder / name) for name in ("source.spm", "target.spm"))
        settings = json_object(folder / "tokenizer_config.json") if (folder / "tokenizer_config.json").is_file() else {}
        self.vocab: dict[str, int] = json_object(folder / "vocab.json")
        separate = bool(settings.get("separate_vocabs")) and (folder / "target_vocab.json").is_file()
        self.target_vocab: dict[str, int] = json_object(folder / "target_vocab.json") if separate else self.vocab
        self.unk, self.eos = str(settings.get("unk_token", "<unk>")), str(settings.get("eos_token", "</s>"))
        self.specials = (self.eos, self.unk, str(settings.get("pad_token", "<pad>")))
        self.special = re.compile("(" + "|".join(re.escape(token) for token in self.specials) + ")")
        if self.unk not in self.vocab or self.eos not in self.vocab:
            raise InputError(Notice(N_("{file} lacks {token}"), file=str(folder / "vocab.json"), token=self.unk))
        self.names = {i: piece for piece, i in self.target_vocab.items()}

    def encode(self, text: str, *, target: bool = False) -> Tokens:
        vocab, model = (self.target_vocab, self.target) if target else (self.vocab, self.source)
        pieces: list[str] = []
        for segment in self.special.split(text):  # a special token's text is that token, the rest is cut by spm
            if segment in self.specials:
                pieces.append(segment)
                continue
            if segment.startswith(">>") and (end := segment.find("<<")) != -1:
                pieces.append(segment[: end + 2])
                segment = segment[end + 2 :]
            pieces.extend(model.encode(segment, out_type=str) if segment else ())
        ids = [vocab.get(piece, vocab[self.unk]) for piece in pieces] + [vocab[self.eos]]
        return Tokens(tuple(ids), (*pieces, self.eos), tuple(p for p in pieces if p not in vocab))

    def piece(self, token_id: int) -> str:
        return self.names.get(int(token_id), self.unk)


class JsonPieces:
    """A tokenizer.json (T5, BART, mBART), the same for source and target."""

    def __init__(self, folder: Path):
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as error:  # tokenizers raises its own Exception subclass
            raise InputError(
                Notice(
                    N_("{file} is not a readable tokenizer.json ({error})"),
                    file=str(folder / "tokenizer.json"),
                    error=str(error).splitlines()[0],
                )
            ) from None
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    def encode(self, text: str, *, target: bool = False) -> Tokens:
        encoding = self.tokenizer.encode(text)
        unk = getattr(self.tokenizer.model, "unk_token", None)
        unknown = tuple(text[a:b] for (a, b), piece in zip(encoding.offsets, encoding.tokens) if piece == unk)
        return Tokens(tuple(encoding.ids), tuple(encoding.tokens), unknown)

    def piece(self, token_id: int) -> str:
        return self.tokenizer.id_to_token(int(token_id)) or "<unk>"


def load_tokenizer(folder: str | Path) -> MarianPieces | JsonPieces:
    """Returns the folder's tokenizer: tokenizer.json where there is one, else Marian's .spm files."""
    folder = Path(folder)
    if (folder / "tokenizer.json").is_file():
        return JsonPieces(folder)
    if all((folder / name).is_file() for name in ("source.spm", "target.spm", "vocab.json")):
        return MarianPieces(folder)
    raise InputError(
        Notice(
            N_("{folder} has no tokenizer.json nor Marian's source.spm, target.spm and vocab.json"), folder=str(folder)
        )
    )


def _spm(sentencepiece, path: Path):
    try:
        return sentencepiece.SentencePieceProcessor(model_file=str(path))
    except (OSError, RuntimeError) as error:
        raise InputError(
            Notice(
                N_("{file} is not a readable sentencepiece model ({error})"),
                file=str(path),
                error=str(error).splitlines()[0] if str(error) else type(error).__name__,
            )
        ) from None
