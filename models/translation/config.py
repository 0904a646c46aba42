"""What a Hugging Face translation folder's config.json says about its architecture, read once.

One frozen ``Arch`` describes Marian, T5 and BART/mBART for the one forward (models/translation/forward.py):
what differs between them is a row of ``FAMILIES`` (where positions come from, which norm and where it sits,
whether scores are scaled by 1/√d, embeddings normalised, a final norm per stack) plus numbers read from the
config (sizes, epsilon, the activation, T5's buckets and gating, the special ids). ``Generation`` holds the
greedy decoder's rules from generation_config.json (or config.json, as transformers 4.x saved them). A value
the forward does not compute is refused with one line naming it, never ignored. No jax here.

transformers' configuration_{marian,t5,bart,mbart}.py and modeling_*.py are the reference for each name.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.record import InputError
from models.text import N_, Notice

# model_type -> (positions, norm, pre_norm, embedding norm, final norm per stack, scaled scores, position offset)
FAMILIES: dict[str, tuple[str, str, bool, bool, bool, bool, int]] = {
    "marian": ("sinusoidal", "layer", False, False, False, True, 0),
    "t5": ("relative", "rms", True, False, True, False, 0),
    "bart": ("learned", "layer", False, True, False, True, 2),
    "mbart": ("learned", "layer", True, True, True, True, 2),
}
ACTIVATIONS = ("relu", "gelu", "gelu_new", "gelu_pytorch_tanh", "silu", "swish", "tanh")
MAX_TOKENS = 512  # source and target tokens read at most (relative positions have no table to bound them)


@dataclass(frozen=True)
class Arch:
    """One translation model's architecture (static: hashable, one compile per model and shapes).

    positions: "sinusoidal" (Marian: sin in the first half, cos in the second), "interleaved" (sin at even
    features, cos at odd ones: the date model, models/translation/date_model.py), "learned" (BART's table, read at
    position + offset) or "relative" (T5's buckets, a bias per head made by each stack's first layer).
    norm: "layer" (LayerNorm with bias) or "rms" (T5: no mean, no bias); pre_norm: x + f(norm(x)), else
    post-norm norm(x + f(x)); embed_norm: a norm after the embeddings (BART's layernorm_embedding); final_norm:
    a norm after each stack's last layer. scaled: scores q·k/√d, else q·k (T5). embed_scale: √D where scale_embedding.
    output_scale: D^-1/2 on the decoder's output before the LM head (T5 with tied embeddings), else 1.
    """

    model_type: str
    width: int
    encoder_layers: int
    decoder_layers: int
    encoder_heads: int
    decoder_heads: int
    encoder_head_dim: int
    decoder_head_dim: int
    vocab_size: int
    positions: str
    norm: str
    eps: float
    pre_norm: bool
    embed_norm: bool
    final_norm: bool
    scaled: bool
    embed_scale: float
    output_scale: float
    position_offset: int
    max_positions: int
    activation: str
    gated: bool
    buckets: int
    max_distance: int
    pad_id: int
    eos_id: int
    decoder_start_id: int
    wrap_last_label: bool  # mBART's teacher forcing: the decoder starts with the labels' last token (the language)


@dataclass(frozen=True)
class Generation:
    """The greedy decoder's rules (static), as transformers' logits processors apply them with num_beams=1:
    tokens never written (single-token bad_words_ids), forced_bos (written first, -1: none), forced_eos (written
    at the last step of max_new, -1: none), the end-of-sequence ids, min_length (no end token before the output,
    start token included, is that long). ignored: the folder's settings greedy decoding here does not apply
    (name=value), which a record's notice names."""

    banned: tuple[int, ...] = ()
    forced_bos: int = -1
    forced_eos: int = -1
    eos_ids: tuple[int, ...] = ()
    min_length: int = 0
    ignored: tuple[str, ...] = ()


# Settings of a generation config that change a greedy output and are not applied here: named in a notice.
NOT_APPLIED = {
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "repetition_penalty": 1.0,
    "min_new_tokens": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "forced_decoder_ids": None,
    "sequence_bias": None,
}


def _refuse(name: str, value: Any, model_type: str) -> InputError:
    return InputError(
        Notice(
            N_("config.json: {name} = {value} is not supported for a {model_type} model"),
            name=name,
            value=json.dumps(value),
            model_type=model_type,
        )
    )


def _whole(data: dict, name: str, default: Any = None, low: int = 1, high: int = 1_000_000) -> int:
    value = data.get(name)
    value = default if value is None else value  # transformers writes null for an unset id
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(
            Notice(
                N_("config.json: {name} must be a whole number from {low} to {high}, got {value}"),
                name=name,
                low=low,
                high=high,
                value=json.dumps(value),
            )
        )
    return value


def read_arch(data: dict[str, Any]) -> Arch:
    """Returns the Arch of a parsed config.json; InputError naming the first value it cannot compute."""
    model_type = data.get("model_type")
    if model_type not in FAMILIES:
        raise InputError(
            Notice(
                N_("model_type {value} is not supported; supported: {supported}"),
                value=json.dumps(model_type),
                supported=", ".join(FAMILIES),
            )
        )
    positions, norm, pre_norm, embed_norm, final_norm, scaled, offset = FAMILIES[model_type]
    if model_type == "t5":
        return _t5(data, positions, norm, pre_norm, final_norm)
    width = _whole(data, "d_model", 1024)
    heads = (_whole(data, "encoder_attention_heads", 16), _whole(data, "decoder_attention_heads", 16))
    if any(width % h for h in heads):
        raise _refuse("d_model", width, model_type)
    activation = data.get("activation_function", "gelu")
    if activation not in ACTIVATIONS:
        raise _refuse("activation_function", activation, model_type)
    if model_type == "marian":
        if data.get("share_encoder_decoder_embeddings", True) is not True:
            raise _refuse("share_encoder_decoder_embeddings", data["share_encoder_decoder_embeddings"], model_type)
        for name in ("normalize_before", "normalize_embedding", "add_final_layer_norm"):
            if data.get(name):  # fairseq-era names of a layout Marian's HF code does not have
                raise _refuse(name, data[name], model_type)
    vocab = _whole(data, "vocab_size", 50265)
    pad = _whole(data, "pad_token_id", 1, 0, vocab - 1)
    return Arch(
        model_type=model_type,
        width=width,
        encoder_layers=_whole(data, "encoder_layers", 12),
        decoder_layers=_whole(data, "decoder_layers", 12),
        encoder_heads=heads[0],
        decoder_heads=heads[1],
        encoder_head_dim=width // heads[0],
        decoder_head_dim=width // heads[1],
        vocab_size=vocab,
        positions=positions,
        norm=norm,
        eps=1e-5,
        pre_norm=pre_norm,
        embed_norm=embed_norm,
        final_norm=final_norm,
        scaled=scaled,
        embed_scale=math.sqrt(width) if data.get("scale_embedding", False) else 1.0,
        output_scale=1.0,
        position_offset=offset,
        max_positions=_whole(data, "max_position_embeddings", 1024),
        activation=activation,
        gated=False,
        buckets=0,
        max_distance=0,
        pad_id=pad,
        eos_id=_whole(data, "eos_token_id", 2, 0, vocab - 1),
        decoder_start_id=_whole(data, "decoder_start_token_id", pad if model_type == "marian" else 2, 0, vocab - 1),
        wrap_last_label=model_type == "mbart",
    )


def _t5(data: dict, positions: str, norm: str, pre_norm: bool, final_norm: bool) -> Arch:
    proj = data.get("feed_forward_proj", "relu")
    parts = proj.split("-") if isinstance(proj, str) else []
    gated = len(parts) == 2 and parts[0] == "gated"
    activation = "gelu_new" if proj == "gated-gelu" else (parts[-1] if parts else None)
    if not parts or len(parts) > 2 or (len(parts) == 2 and not gated) or activation not in ACTIVATIONS:
        raise _refuse("feed_forward_proj", proj, "t5")
    width, layers = _whole(data, "d_model", 512), _whole(data, "num_layers", 6)
    vocab = _whole(data, "vocab_size", 32128)
    # transformers 5 writes scale_decoder_outputs; 4.x meant it by tie_word_embeddings (T5 v1.1 and FLAN: false).
    scaled = data.get("scale_decoder_outputs", data.get("tie_word_embeddings", True) is not False)
    return Arch(
        model_type="t5",
        width=width,
        encoder_layers=layers,
        decoder_layers=_whole(data, "num_decoder_layers", layers)
        if data.get("num_decoder_layers") is not None
        else layers,
        encoder_heads=_whole(data, "num_heads", 8),
        decoder_heads=_whole(data, "num_heads", 8),
        encoder_head_dim=_whole(data, "d_kv", 64),
        decoder_head_dim=_whole(data, "d_kv", 64),
        vocab_size=vocab,
        positions=positions,
        norm=norm,
        eps=float(data.get("layer_norm_epsilon", 1e-6)),
        pre_norm=pre_norm,
        embed_norm=False,
        final_norm=final_norm,
        scaled=False,
        embed_scale=1.0,
        output_scale=width**-0.5 if scaled else 1.0,
        position_offset=0,
        max_positions=MAX_TOKENS,
        activation=activation,
        gated=gated,
        buckets=_whole(data, "relative_attention_num_buckets", 32, 2),
        max_distance=_whole(data, "relative_attention_max_distance", 128, 2),
        pad_id=_whole(data, "pad_token_id", 0, 0, vocab - 1),
        eos_id=_whole(data, "eos_token_id", 1, 0, vocab - 1),
        decoder_start_id=_whole(data, "decoder_start_token_id", 0, 0, vocab - 1),
        wrap_last_label=False,
    )


def json_object(path: Path) -> dict:
    """Returns the JSON object in the file at path; InputError (one line) if it is unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(
            Notice(N_("{file} is not valid JSON ({error})"), file=str(path), error=str(error).splitlines()[0])
        ) from None
    if not isinstance(data, dict):
        raise InputError(Notice(N_("{file} is not a JSON object"), file=str(path)))
    return data


def read_generation(folder: str | Path, data: dict[str, Any], arch: Arch) -> Generation:
    """Returns the greedy rules of generation_config.json, else those config.json carries (transformers 4.x)."""
    path = Path(folder) / "generation_config.json"
    source = json_object(path) if path.is_file() else data
    bad = source.get("bad_words_ids") or []
    banned = tuple(sorted({int(ids[0]) for ids in bad if isinstance(ids, list) and len(ids) == 1}))
    eos = source.get("eos_token_id", arch.eos_id)
    eos_ids = tuple(int(i) for i in (eos if isinstance(eos, list) else [eos]) if isinstance(i, int))
    forced_bos, forced_eos = source.get("forced_bos_token_id"), source.get("forced_eos_token_id")
    ignored = [
        f"{name}={json.dumps(source[name])}"
        for name, default in NOT_APPLIED.items()
        if source.get(name, default) not in (default, [], {})
    ]
    ignored += [f"bad_words_ids={json.dumps(ids)}" for ids in bad if not (isinstance(ids, list) and len(ids) == 1)][:1]
    min_length = source.get("min_length", 0)
    return Generation(
        banned=banned,
        forced_bos=forced_bos if isinstance(forced_bos, int) else -1,
        forced_eos=forced_eos if isinstance(forced_eos, int) else -1,
        eos_ids=eos_ids or (arch.eos_id,),
        min_length=min_length if isinstance(min_length, int) and not isinstance(min_length, bool) else 0,
        ignored=tuple(ignored),
    )
