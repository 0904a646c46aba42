"""A Hugging Face translation folder (Marian, T5, BART, mBART) turned into attention records.

    translator = shared_translator("opus-mt-en-zh")
    done = translate(translator, "The cat sat on the mat.")            # greedy: the maps of its own output
    done = translate(translator, "The cat sat.", target="猫坐着。")       # teacher forcing
    to_record("transformer-cross", "cross", done)

Records are ("layer", "head", "query", "key") float32, labels the subword pieces:
- encoder: source pieces × source pieces;
- decoder: output pieces × what the decoder read at each position (the start token, then the output
  shifted right; exactly 0 above the diagonal);
- cross: output pieces × source pieces; its extras hold the head-mean alignment ("alignment" [T, S]: the mean
  over layers and heads; "alignment_by_layer" [L, T, S]) and its meta the best-aligned pairs and the source
  pieces no output piece attends to most (see ``alignment_summary``).
Row t of the decoder and cross records is what the model attended to while writing (or, teacher-forced,
predicting) output piece t. With a target, the output is the target as the model's own teacher forcing reads it:
its tokenizer's ids, the decoder fed the start token (mBART: the target's last token, its language code) and the
target shifted right. Without one, the output is greedy decoding's, cut after the first end token.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.capture import Capture
from models.model_folders import SharedRunners, TensorFiles, model_dir_option, read_config_json
from models.padding import bucket
from models.record import AttentionRecord, InputError
from models.text import N_, Notice
from models.translation.config import MAX_TOKENS, Arch, Generation, read_arch, read_generation
from models.translation.forward import MAPS, KindCapture, greedy, teacher_forced
from models.translation.loader import load_params
from models.translation.tokenizer import JsonPieces, MarianPieces, Tokens, load_tokenizer

AXES = ("layer", "head", "query", "key")
KINDS = ("encoder", "decoder", "cross")
LENGTH_BUCKETS = (16, 32, 64, 128, 256, 512)
MAX_NEW = 64  # greedy tokens written at most by default
CAPTURE = KindCapture(encoder=MAPS.encoder, decoder=Capture(maps=True), cross=MAPS.cross)  # the maps and logits
NO_FOLDER = Notice(N_("a translation model needs a folder: give a Marian, T5, BART or mBART folder (--model-dir)"))


@dataclass
class Translator:
    """A loaded translation folder: its architecture, greedy rules, parameters and tokenizer."""

    folder: Path
    arch: Arch
    rules: Generation
    params: dict[str, Any]
    tokenizer: MarianPieces | JsonPieces
    weight_bytes: int

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def max_tokens(self) -> int:
        """Returns how many source or target tokens the model reads at most (its positions, at most MAX_TOKENS)."""
        return min(self.arch.max_positions, MAX_TOKENS)

    def specials(self) -> set[str]:
        """Returns the pieces that are special tokens (left out of the alignment's pairs)."""
        if isinstance(self.tokenizer, MarianPieces):
            return {self.tokenizer.eos, self.tokenizer.unk, self.tokenizer.piece(self.arch.pad_id)}
        added = self.tokenizer.tokenizer.get_added_tokens_decoder()
        return {token.content for token in added.values() if token.special}

    def text(self, ids: list[int]) -> str:
        """Returns the output text of ids, special tokens left out."""
        if isinstance(self.tokenizer, MarianPieces):
            pieces = [self.tokenizer.piece(i) for i in ids]
            return self.tokenizer.target.decode_pieces([p for p in pieces if p not in self.specials()])
        return self.tokenizer.tokenizer.decode(list(ids), skip_special_tokens=True)


def load_translator(folder: str | Path | None, max_bytes: int | None = None) -> Translator:
    """Returns the Translator of a folder; InputError with one line for a folder it cannot read."""
    if folder in (None, ""):
        raise InputError(NO_FOLDER)
    folder = Path(folder).expanduser()
    data = read_config_json(folder)
    arch = read_arch(data)
    files = TensorFiles(folder)
    files.check_size(max_bytes)
    tokenizer = load_tokenizer(folder)
    return Translator(
        folder=folder,
        arch=arch,
        rules=read_generation(folder, data, arch),
        params=load_params(folder, arch, files),
        tokenizer=tokenizer,
        weight_bytes=files.float32_bytes(),
    )


shared_translator = SharedRunners(load_translator, kept=2)


@dataclass(frozen=True)
class Translation:
    """One source read with one output: the pieces and the three attention arrays (float32).

    encoder [L, H, S, S], decoder [L, H, T, T], cross [L, H, T, S]; output_ids: the T pieces written (or
    teacher-forced); decoder_pieces: what the decoder read (the start token, then the output shifted right).
    """

    source: Tokens
    output_ids: tuple[int, ...]
    output_pieces: tuple[str, ...]
    decoder_pieces: tuple[str, ...]
    output_text: str
    teacher_forced: bool
    encoder: np.ndarray
    decoder: np.ndarray
    cross: np.ndarray
    logits: np.ndarray  # [T, V] of the teacher-forced pass
    notices: tuple[str, ...]
    model: str
    model_type: str


CUT = {
    "source": N_("the source is {count} tokens; only the first {kept} are read"),
    "target": N_("the target is {count} tokens; only the first {kept} are read"),
}


def _cut(tokens: Tokens, limit: int, what: str, notices: list[str]) -> Tokens:
    # Keeps the first `limit` tokens of the source or the target, with a notice when some are dropped.
    if len(tokens.ids) <= limit:
        return tokens
    notices.append(Notice(CUT[what], count=len(tokens.ids), kept=limit))
    return Tokens(tokens.ids[:limit], tokens.pieces[:limit], tokens.unknown)


def translate(translator: Translator, text: str, target: str | None = None, max_new: int = MAX_NEW) -> Translation:
    """Returns the three attention arrays of one source: teacher-forced with `target`, else greedy (max_new tokens)."""
    arch, tokenizer, notices = translator.arch, translator.tokenizer, []
    if not text or not text.strip():
        raise InputError(Notice(N_("the source text is empty: give a sentence to translate")))
    source = _cut(tokenizer.encode(text), translator.max_tokens, "source", notices)
    if source.unknown:
        notices.append(
            Notice(
                N_("pieces the model's vocabulary lacks, read as <unk>: {pieces}"), pieces=" ".join(source.unknown[:10])
            )
        )
    s = len(source.ids)
    src = np.full((1, min(bucket(s, LENGTH_BUCKETS), translator.max_tokens)), arch.pad_id, np.int32)
    src[0, :s] = source.ids
    src_len = np.asarray([s], np.int32)
    if target is not None and target.strip():
        labels = list(_cut(tokenizer.encode(target, target=True), translator.max_tokens, "target", notices).ids)
    else:
        if not 1 <= max_new <= translator.max_tokens:
            raise InputError(
                Notice(
                    N_("the tokens to write must be from 1 to {high}, got {value}"),
                    high=translator.max_tokens,
                    value=max_new,
                )
            )
        written = np.asarray(greedy(arch, translator.params, src, src_len, rules=translator.rules, steps=max_new))[0]
        if translator.rules.ignored:
            notices.append(
                Notice(
                    N_("greedy decoding here does not apply the folder's {settings}"),
                    settings=", ".join(translator.rules.ignored),
                )
            )
        ends = [i for i, token in enumerate(written.tolist()) if token in translator.rules.eos_ids]
        labels = written[: ends[0] + 1 if ends else len(written)].tolist()
    forced = target is not None and bool(target.strip())
    start = labels[-1] if forced and arch.wrap_last_label else arch.decoder_start_id  # greedy began with the start id
    fed = [start, *labels[:-1]]
    t = len(labels)
    tgt = np.full((1, min(bucket(t, LENGTH_BUCKETS), translator.max_tokens)), arch.pad_id, np.int32)
    tgt[0, :t] = fed
    out = teacher_forced(arch, translator.params, src, src_len, tgt, capture=CAPTURE)
    encoder, decoder, cross = (np.stack([np.asarray(m) for m in out[kind]["maps"]], axis=1)[0] for kind in KINDS)
    return Translation(
        source=source,
        output_ids=tuple(int(i) for i in labels),
        output_pieces=tuple(tokenizer.piece(i) for i in labels),
        decoder_pieces=tuple(tokenizer.piece(i) for i in fed),
        output_text=translator.text(labels),
        teacher_forced=forced,
        encoder=encoder[:, :, :s, :s].astype(np.float32),
        decoder=decoder[:, :, :t, :t].astype(np.float32),
        cross=cross[:, :, :t, :s].astype(np.float32),
        logits=np.asarray(out["logits"])[0, :t].astype(np.float32),
        notices=tuple(notices),
        model=translator.name,
        model_type=arch.model_type,
    )


def alignment_summary(cross: np.ndarray, output_pieces, source_pieces, specials: set[str]) -> dict[str, Any]:
    """Returns the head-mean alignment of a cross-attention array [L, H, T, S] and what it says.

    alignment [T, S]: the mean over layers and heads (each row still sums to 1); alignment_by_layer [L, T, S]:
    the mean over heads. pairs: for each output piece that is not a special token, the source piece (not a
    special token) it attends to most, best-aligned first: [output piece, source piece, weight, t, s].
    unattended: the source pieces (not special tokens) that no output piece attends to most: [piece, s, the
    largest weight any output piece gives it].
    """
    by_layer = cross.mean(axis=1)
    alignment = by_layer.mean(axis=0)
    columns = [s for s, piece in enumerate(source_pieces) if piece not in specials]
    pairs, chosen = [], set()
    if columns:
        for t, piece in enumerate(output_pieces):
            if piece in specials:
                continue
            s = columns[int(np.argmax(alignment[t, columns]))]
            chosen.add(s)
            pairs.append([piece, source_pieces[s], float(alignment[t, s]), t, s])
    pairs.sort(key=lambda pair: -pair[2])
    unattended = [[source_pieces[s], s, float(alignment[:, s].max(initial=0.0))] for s in columns if s not in chosen]
    return {
        "alignment": alignment.astype(np.float32),
        "alignment_by_layer": by_layer.astype(np.float32),
        "pairs": pairs,
        "unattended": unattended,
    }


def to_record(mechanism_id: str, kind: str, done: Translation, specials: set[str] = frozenset()) -> AttentionRecord:
    """Returns the ("layer", "head", "query", "key") record of one kind ("encoder", "decoder" or "cross")."""
    if kind not in KINDS:
        raise InputError(f"unknown translation record {kind!r}; known: {', '.join(KINDS)}")
    source = done.source.pieces
    weights, queries, keys = {
        "encoder": (done.encoder, source, source),
        "decoder": (done.decoder, done.output_pieces, done.decoder_pieces),
        "cross": (done.cross, done.output_pieces, source),
    }[kind]
    meta: dict[str, Any] = {
        "model": done.model,
        "model_type": done.model_type,
        "output": done.output_text,
        "teacher_forced": done.teacher_forced,
        "attention": kind,
        "notices": list(done.notices),
        "unknown_pieces": list(done.source.unknown),
        "output_ids": list(done.output_ids),
    }
    extras: dict[str, Any] = {}
    if kind == "decoder":
        meta["keys"] = "what the decoder read at each position: the start token, then the output shifted right"
    if kind == "cross":
        summary = alignment_summary(done.cross, done.output_pieces, source, set(specials))
        extras = {"alignment": summary["alignment"], "alignment_by_layer": summary["alignment_by_layer"]}
        meta |= {"aligned_pairs": summary["pairs"], "unattended_source": summary["unattended"]}
    return AttentionRecord(
        mechanism=mechanism_id,
        weights=weights.copy(),
        axes=AXES,
        query_labels=queries,
        key_labels=keys,
        meta=meta,
        extras=extras,
    )


@functools.lru_cache(maxsize=16)
def _translated(folder: str | None, text: str, target: str | None, max_new: int) -> Translation:
    # One translation per input, shared by its three records (a page shows them side by side).
    return translate(shared_translator(folder), text, target, max_new)


def forget_translators() -> None:
    """Drops the loaded folders and the translations made with them (a folder's files replaced on disk)."""
    shared_translator.forget()
    _translated.cache_clear()


def translation_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: options model_dir, text, target (optional), max_new -> the record of mechanism.variant."""
    folder = model_dir_option(options)
    translator = shared_translator(folder)
    done = _translated(folder, options["text"], options.get("target") or None, int(options.get("max_new") or MAX_NEW))
    record = to_record(mechanism.id, mechanism.variant, done, translator.specials())
    return AttentionRecord(
        mechanism=record.mechanism,
        weights=record.weights,
        axes=record.axes,
        query_labels=record.query_labels,
        key_labels=record.key_labels,
        meta={**record.meta, "input": options["text"], "target": options.get("target") or None},
        extras=record.extras,
    )


def translation_records(mechanism, options_list: list[Mapping[str, Any]]) -> list[AttentionRecord]:
    """Registry batch builder: one record per option dict (one input at a time: translations differ in length)."""
    return [translation_record(mechanism, options) for options in options_list]
