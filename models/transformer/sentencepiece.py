"""XLM-R's tokenizer from a folder's sentencepiece.bpe.model alone (older XLM-R folders have no tokenizer.json).

The .model file is a protobuf ModelProto; the few fields a Unigram tokenizer needs are read here from the wire
format (no sentencepiece or protobuf package): each piece's text, score and type, the trainer's model type and
the normaliser's precompiled character map. The `tokenizers` pipeline is then the one transformers builds for
XLM-R (XLMRobertaTokenizer and its converter): fairseq's ids (<s> 0, <pad> 1, </s> 2, <unk> 3, the model's
pieces from 4 on, <mask> last), the Precompiled normaliser, whitespace split and "▁" prepended to every word,
and <s> A </s> (</s> B </s>) around the text. A model that is not Unigram is refused in one line.
"""

from __future__ import annotations

import struct
from pathlib import Path

from models.record import InputError

SPM_FILES = ("sentencepiece.bpe.model",)
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
MASK = "<mask>"
UNIGRAM = 1  # TrainerSpec.ModelType


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: bytes):
    """Yields (field number, wire type, value) of a protobuf message: int for varints, bytes otherwise."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 1:
            value, at = data[at : at + 8], at + 8
        elif wire == 2:
            size, at = _varint(data, at)
            value, at = data[at : at + size], at + size
        elif wire == 5:
            value, at = data[at : at + 4], at + 4
        else:
            raise ValueError(f"wire type {wire}")
        if at > len(data):
            raise ValueError("truncated field")
        yield number, wire, value


def read_model(data: bytes) -> tuple[list[tuple[str, float]], int, bytes]:
    """Returns (pieces [(text, score)] in id order, the trainer's model type, the precompiled charsmap)."""
    pieces, model_type, charsmap = [], UNIGRAM, b""
    for number, wire, value in _fields(data):
        if number == 1 and wire == 2:  # SentencePiece: 1 piece, 2 score
            text, score = "", 0.0
            for n, w, v in _fields(value):
                if n == 1 and w == 2:
                    text = v.decode("utf-8")
                elif n == 2 and w == 5:
                    score = struct.unpack("<f", v)[0]
            pieces.append((text, score))
        elif number == 2 and wire == 2:  # TrainerSpec: 3 model_type
            model_type = next((v for n, w, v in _fields(value) if n == 3 and w == 0), UNIGRAM)
        elif number == 3 and wire == 2:  # NormalizerSpec: 2 precompiled_charsmap
            charsmap = next((v for n, w, v in _fields(value) if n == 2 and w == 2), b"")
    return pieces, model_type, charsmap


def spm_file(model_dir: str | Path) -> Path | None:
    """Returns the folder's sentencepiece model, or None."""
    return next((Path(model_dir) / n for n in SPM_FILES if (Path(model_dir) / n).is_file()), None)


def xlm_roberta_tokenizer(file: str | Path):
    """Returns a `tokenizers.Tokenizer` equal to transformers' XLM-R tokenizer of this sentencepiece model.

    Raises InputError (one line) for a file that is not a readable Unigram sentencepiece model.
    """
    from tokenizers import AddedToken, Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    try:
        pieces, model_type, charsmap = read_model(Path(file).read_bytes())
    except (OSError, ValueError, UnicodeDecodeError, struct.error) as error:
        raise InputError(f"{file} is not a readable sentencepiece model ({str(error).splitlines()[0]})") from None
    if model_type != UNIGRAM or len(pieces) < 4:
        raise InputError(
            f"{file}: only a Unigram sentencepiece model is read here (this one has model type "
            f"{model_type} and {len(pieces)} pieces); write tokenizer.json with transformers"
        )
    # fairseq's order: its four specials, the model's pieces after its own <unk> <s> </s>, then <mask>
    vocab = [(text, 0.0) for text in FAIRSEQ_SPECIALS] + [(t, float(s)) for t, s in pieces[3:]] + [(MASK, 0.0)]
    tokenizer = Tokenizer(Unigram(vocab, unk_id=3, byte_fallback=False))
    if charsmap:
        tokenizer.normalizer = normalizers.Precompiled(charsmap)
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")]
    )
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in (*FAIRSEQ_SPECIALS, MASK)])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    return tokenizer
