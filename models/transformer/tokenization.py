"""Tokenization for BERT-family models with the `tokenizers` library, on a folder's tokenizer.json.

The tokenizer.json is read as is, whatever its model (WordPiece for BERT, DistilBERT and ELECTRA, byte-level
BPE for RoBERTa and ModernBERT, Unigram for XLM-R) and post-processor (<s> A </s></s> B </s> for RoBERTa).
An XLM-R folder with only sentencepiece.bpe.model (older folders) is read through models/transformer/
sentencepiece.py; another folder with only a sentencepiece model is refused in one line saying how to write
its tokenizer.json.

Shipped tokenizer.json files often pad and truncate at 128 (all-MiniLM-L6-v2 does): padding is
turned off here and truncation set to the model's limit (its max_position_embeddings, 512 for
MiniLM). When text is cut, the encoding says so and where, in one sentence for the user.
Pairs are encoded as [CLS] A [SEP] B [SEP] with token_type_ids 0…0 1…1 (the tokenizer's own
post-processor template). Tokens are kept exactly as the tokenizer makes them (## pieces, [UNK]).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.options import cut_text
from models.record import InputError
from models.text import N_, Notice

# How much of the kept text the truncation notice quotes, in characters.
NOTICE_CONTEXT = 40


@dataclass(frozen=True)
class Encoding:
    """One tokenized input: tokens, ids [T] int32, token types [T] int32, and any truncation.

    segments [T] int32: 0 for the first text, 1 from the second text's first token on (the views of a pair read
    them); the token types where the tokenizer writes a pair's in them (BERT), else from its sequence ids
    (RoBERTa's, XLM-R's and ModernBERT's types are all 0). None: the token types.
    """

    tokens: tuple[str, ...]
    input_ids: np.ndarray
    token_type_ids: np.ndarray
    truncated: bool = False
    notice: Notice | None = None
    segments: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def pair_segments(self) -> np.ndarray:
        """Returns int32 [T]: segments, or the token types where none were given."""
        return self.token_type_ids if self.segments is None else self.segments


class BertTokenizer:
    """A tokenizer.json wrapper that never pads and truncates at max_length tokens (specials included)."""

    def __init__(self, tokenizer_file, max_length: int):
        """tokenizer_file: a tokenizer.json path, or a `tokenizers.Tokenizer` (XLM-R's from its sentencepiece model)."""
        from tokenizers import Tokenizer

        try:
            if isinstance(tokenizer_file, Tokenizer):
                self._full, self._cut = (Tokenizer.from_str(tokenizer_file.to_str()) for _ in range(2))
            else:
                self._full = Tokenizer.from_file(str(tokenizer_file))
                self._cut = Tokenizer.from_file(str(tokenizer_file))
        except Exception as error:  # noqa: BLE001 - the library raises a bare Exception on bad files
            raise InputError(
                f"{tokenizer_file} is not a readable tokenizer.json ({str(error).splitlines()[0]})"
            ) from None
        self.max_length = int(max_length)
        self.unknown = unknown_token(self._full)
        self._full.no_padding()
        self._full.no_truncation()
        self._cut.no_padding()
        self._cut.enable_truncation(self.max_length, strategy="longest_first")

    @property
    def vocab_size(self) -> int:
        return self._full.get_vocab_size()

    def encode(self, text: str, text_pair: str | None = None) -> Encoding:
        """Returns the encoding of one text, or of a pair [CLS] A [SEP] B [SEP].

        Raises InputError if the text is empty or whitespace only. A whitespace-only pair is no pair.
        """
        text, text_pair = check_text(text, text_pair)
        # Cut on characters first: the tokenizer would otherwise encode all of a huge paste
        # before truncating to max_length tokens.
        text, cut_notice = cut_text(text)
        if text_pair is not None:
            text_pair, pair_notice = cut_text(text_pair)
            if pair_notice and not cut_notice:
                cut_notice = Notice(N_("the second sentence was cut to its first {kept:,} of {total:,} characters"),
                                    **pair_notice.parts[0][1])
        full = self._full.encode(text, text_pair)
        if len(full.ids) <= self.max_length:
            notice = _empty_notice(full)
            return _encoding(full, truncated=cut_notice is not None,
                             notice=_joined(cut_notice, notice, _unknown_notice(full, (text, text_pair), self.unknown)))
        cut = self._cut.encode(text, text_pair)
        return _encoding(cut, truncated=True, notice=_joined(cut_notice, self._cut_notice(full, cut, (text, text_pair)),
                                                             _unknown_notice(cut, (text, text_pair), self.unknown)))

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        """Returns one encoding per text (no pairs)."""
        return [self.encode(text) for text in texts]

    def _cut_notice(self, full, cut, texts: tuple[str, str | None]) -> Notice:
        # Say, for each sentence that lost tokens, after which words it was cut.
        parts = []
        for seq in range(1 if texts[1] is None else 2):
            kept = [off for off, s in zip(cut.offsets, cut.sequence_ids) if s == seq]
            total = sum(1 for s in full.sequence_ids if s == seq)
            if len(kept) == total:
                continue
            end = kept[-1][1] if kept else 0
            before = texts[seq][:end]
            quote = before[-NOTICE_CONTEXT:]
            if len(before) > NOTICE_CONTEXT:
                # start the quote at a word boundary when there is one
                head, space, tail = quote.partition(" ")
                quote = "…" + (
                    tail if space and tail.strip() and not before[-NOTICE_CONTEXT - 1].isspace() else quote.lstrip()
                )
            quote = quote.strip()
            lost = total - len(kept)
            if kept:
                parts.append(Notice(_LOST_AFTER[seq], lost=lost, total=total, quote=quote))
            else:
                parts.append(Notice(_LOST_ALL[seq], lost=lost, total=total))
        return Notice(N_("Input was cut to {limit} tokens, the model's limit: {losses}."), limit=self.max_length,
                      losses=Notice.join(parts))


# What one sentence lost in a cut at the model's limit: the text's, then a pair's second sentence's.
_LOST_AFTER = (N_("the text lost {lost} of {total} tokens (text after '{quote}' was dropped)"),
               N_("the second sentence lost {lost} of {total} tokens (text after '{quote}' was dropped)"))
_LOST_ALL = (N_("the text lost {lost} of {total} tokens (all of it was dropped)"),
             N_("the second sentence lost {lost} of {total} tokens (all of it was dropped)"))


def check_text(text: str | None, text_pair: str | None = None) -> tuple[str, str | None]:
    """Returns (text, text_pair or None); raises InputError if the text is empty or whitespace only."""
    if text is None or not str(text).strip():
        raise InputError("The text is empty: type a sentence to see its attention.")
    if text_pair is not None and not str(text_pair).strip():
        text_pair = None
    return str(text), None if text_pair is None else str(text_pair)


def _joined(*notices: Notice | None) -> Notice | None:
    # One notice of whole sentences; the English text capitalised and with a full stop, the parts as written.
    return Notice.join((n.restyled(n[0].upper() + n[1:].rstrip(".") + ".") for n in notices if n), " ")


def _empty_notice(encoding) -> Notice | None:
    if all(s is None for s in encoding.sequence_ids):
        return Notice(N_("The tokenizer dropped every character of the text (control or zero-width characters); only "
                         "special tokens remain."))
    return None


UNKNOWN = "[UNK]"
UNKNOWN_SHOWN = 5  # spans quoted in the notice


def unknown_token(tokenizer) -> tuple[str, int] | None:
    """Returns (name, id) of the token a tokenizer writes for what its vocabulary cannot spell ([UNK], <unk>), or
    None (a byte-level BPE spells everything). Unigram keeps the text as the token's string: compare ids."""
    model = json.loads(tokenizer.to_str()).get("model", {})
    if model.get("type") == "Unigram":
        unk_id, vocab = model.get("unk_id"), model.get("vocab") or []
        return (str(vocab[unk_id][0]), unk_id) if isinstance(unk_id, int) and 0 <= unk_id < len(vocab) else None
    name = model.get("unk_token")
    unk_id = None if name is None else tokenizer.token_to_id(name)
    return None if unk_id is None else (name, unk_id)


def _unknown_notice(encoding, texts: tuple[str, str | None], unknown: tuple[str, int] | None) -> Notice | None:
    # The tokenizer turns what its vocabulary cannot spell (emoji, most symbols, some scripts) into
    # one [UNK] per word: "🍕🍕🍕" is one token. Say which parts of the text the model cannot see.
    spans = [texts[seq][start:end] for token, (start, end), seq in
             zip(encoding.ids, encoding.offsets, encoding.sequence_ids) if unknown and token == unknown[1] and seq is not None]
    if not spans:
        return None
    shown = ", ".join(f"“{span if len(span) <= 40 else span[:39] + '…'}”" for span in spans[:UNKNOWN_SHOWN])
    shown += " …" if len(spans) > UNKNOWN_SHOWN else ""
    if len(spans) == 1:
        return Notice(N_("1 part of the text MiniLM's vocabulary cannot spell became {unknown} (one token each, "
                         "whatever its length): {shown}"), unknown=unknown[0], shown=shown)
    return Notice(N_("{count} parts of the text MiniLM's vocabulary cannot spell became {unknown} (one token each, "
                     "whatever its length): {shown}"), count=len(spans), unknown=unknown[0], shown=shown)


def _segments(encoding) -> np.ndarray:
    # int32 [T]: the token types if they split a pair, else 0 up to the second text's first token and 1 from it.
    types = np.asarray(encoding.type_ids, dtype=np.int32)
    if types.any():
        return types
    second = [t for t, seq in enumerate(encoding.sequence_ids) if seq == 1]
    segments = np.zeros(len(types), dtype=np.int32)
    if second:
        segments[second[0] :] = 1
    return segments


def _encoding(encoding, truncated: bool = False, notice: Notice | None = None) -> Encoding:
    return Encoding(
        tokens=tuple(encoding.tokens),
        input_ids=np.asarray(encoding.ids, dtype=np.int32),
        token_type_ids=np.asarray(encoding.type_ids, dtype=np.int32),
        truncated=truncated,
        notice=notice,
        segments=_segments(encoding),
    )


def load_tokenizer(model_dir: str | Path, max_length: int, model_type: str = "bert") -> BertTokenizer:
    """Returns the tokenizer of a model folder: its tokenizer.json, or for XLM-R (model_type "xlm-roberta") its
    sentencepiece.bpe.model; raises InputError if it has neither."""
    from models.transformer.sentencepiece import spm_file, xlm_roberta_tokenizer

    file = Path(model_dir) / "tokenizer.json"
    spm = spm_file(model_dir) if not file.is_file() else None
    if spm is not None and model_type == "xlm-roberta":
        return BertTokenizer(xlm_roberta_tokenizer(spm), max_length)
    pieces = sorted(p.name for p in Path(model_dir).glob("*.model")) if not file.is_file() else []
    if pieces:
        raise InputError(
            f"{model_dir} has no tokenizer.json, only a sentencepiece model ({', '.join(pieces)}), which is read "
            "here for XLM-R only: write tokenizer.json once with transformers (AutoTokenizer.from_pretrained(folder)"
            ".save_pretrained(folder))"
        )
    if not file.is_file():
        raise InputError(
            f"{model_dir} has no tokenizer.json (save it with a fast tokenizer's save_pretrained, which writes one)"
        )
    return BertTokenizer(file, max_length)
