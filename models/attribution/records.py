"""Attribution records: every method of models/attribution/methods.py on every transformer it applies to, as
the same AttentionRecord α is, so figures, exports and the CLI read them unchanged.

    attribution_record("encoder", "alti", load_runner(), "the cat sat on the mat")

architecture: "encoder" (a BERT-style runner, models/transformer/records.py), "decoder" (a decoder LM runner,
models/lm/records.py) or "encdec" (the date encoder–decoder: (graphdef, params), or None for the committed
weights). Weights:
- per-layer methods (norm, value-zeroing): ("layer", "query", "key"), layer l's own matrix;
- alti and chefer: ("layer", "query", "key"), rolled out from the input to layer l's output (ALTI's per-layer
  contributions in extras["per_layer"]);
- gradient-x-input, integrated-gradients, occlusion: ("query", "key"), one row per target (adapters.py says
  which); IG's completeness gap in extras["completeness_gap"].
Rows: the encoder's tokens; the decoder's positions (per-layer methods: every position; the target methods:
position t, whose target is token t + 1, so the last position has no row); the encoder–decoder's emitted
characters. Keys: the input tokens (the encoder–decoder: its source characters).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from models.attribution.adapters import NOT_APPLIED, as_numpy, decoder_arrays, encdec_arrays, encoder_arrays
from models.attribution.methods import GRADIENT, METHODS
from models.record import AttentionRecord, InputError
from models.text import Notice

ARCHITECTURES = ("encoder", "decoder", "encdec")
# Tokens an attribution reads at most: value zeroing and occlusion run one forward per token in one batch,
# and the norm-based and ALTI terms are [T, T, D] (2 GB at 1,024 tokens × 512 wide).
MAX_TOKENS = 128
ROLLED_OUT = ("alti", "chefer")
PAPERS = {
    "norm": "Kobayashi et al. 2020, Attention is Not Only a Weight: Analyzing Transformers with Vector Norms",
    "alti": "Ferrando et al. 2022, Measuring the Mixing of Contextual Information in the Transformer",
    "value-zeroing": "Mohebbi et al. 2023, Quantifying Context Mixing in Transformers",
    "chefer": "Chefer et al. 2021, Generic Attention-model Explainability for Interpreting Bi-Modal and "
    "Encoder-Decoder Transformers",
    "gradient-x-input": "Shrikumar et al. 2016, Not Just a Black Box: Learning Important Features Through "
    "Propagating Activation Differences",
    "integrated-gradients": "Sundararajan et al. 2017, Axiomatic Attribution for Deep Networks",
    "occlusion": "Zeiler & Fergus 2014; Li et al. 2016, Understanding Neural Networks through Representation Erasure",
}
TARGETS = {
    "encoder": "row i: <h_i, u_i>, token i's last hidden state along its own direction u_i = h_i/|h_i| (fixed)",
    "decoder": "row t: log p(token t+1 | tokens up to t)",
    "encdec": "row t: log p(emitted character t | source, characters before), teacher-forced on the greedy output",
}
BASELINES = {
    "encoder": "the [PAD] embedding at every position",
    "decoder": "the average token (mean embedding direction at a typical token's length), positions kept",
    "encdec": "the average source character (mean embedding direction at a typical length), positions kept",
}


def _applies() -> dict[str, dict[str, bool | str]]:
    table: dict[str, dict[str, bool | str]] = {method: dict.fromkeys(ARCHITECTURES, True) for method in METHODS}
    for method, reasons in NOT_APPLIED.items():
        table[method].update(reasons)
    return table


# APPLIES[method][architecture]: True, or the one line saying why the method does not apply there.
APPLIES = _applies()


def check_applies(method: str, architecture: str) -> None:
    """Raises InputError (one line) when the method is unknown or does not apply to the architecture."""
    if method not in METHODS:
        raise InputError(f"unknown attribution method {method!r}; choose one of {', '.join(METHODS)}")
    if architecture not in ARCHITECTURES:
        raise InputError(f"unknown architecture {architecture!r}; choose one of {', '.join(ARCHITECTURES)}")
    verdict = APPLIES[method][architecture]
    if verdict is not True:
        raise InputError(f"{method} does not apply to the {architecture}: {verdict}")


def _check_length(tokens: int) -> None:
    if tokens > MAX_TOKENS:
        raise InputError(
            f"attributions read at most {MAX_TOKENS} tokens here (value zeroing and occlusion run one "
            f"forward per token); this text has {tokens}: shorten it"
        )


def _encoder(method: str, runner, inputs, steps: int):
    text, pair = (inputs, None) if isinstance(inputs, str) else inputs
    encoding = runner.encode(text, pair)
    _check_length(len(encoding.tokens))
    ids, types, mask = runner.padded([encoding], 1)
    arrays = encoder_arrays(runner.params, ids, types, mask, cfg=runner.config, method=method, steps=steps)
    n = len(encoding.tokens)
    labels = tuple(encoding.tokens)
    meta = {"model": runner.name, "truncated": encoding.truncated, "notice": encoding.notice}
    return as_numpy(arrays), n, n, labels, labels, meta


def _decoder(method: str, runner, text: str, steps: int):
    from models.lm.forward import pad_ids

    encoding = runner.encode(text)
    n = len(encoding.ids)
    _check_length(n)
    if n < 2 and method not in ("norm", "alti", "value-zeroing"):
        raise InputError("the text has one token: there is no next token to attribute; type a longer text")
    ids, mask = pad_ids(encoding.ids[None], runner.buckets)
    lm = runner.lm
    arrays = decoder_arrays(lm.state, ids, mask, graphdef=lm.graphdef, method=method, steps=steps)
    rows = n if method in ("norm", "alti", "value-zeroing") else n - 1
    meta = {"model": runner.name, "truncated": encoding.truncated, "notice": Notice.join(encoding.notices)}
    return as_numpy(arrays), rows, n, encoding.labels[:rows], encoding.labels, meta


def _encdec(method: str, weights, text: str, steps: int):
    from models.encdec.forward import read_own_output
    from models.encdec.model import BOS_ID, LENGTH_BUCKETS, pad_batch
    from models.encdec.records import weights_at
    from models.seq2seq import task as dates

    graphdef, params = weights_at(None) if weights is None else weights
    source = dates.encode_source(text)
    src, lengths = pad_batch([source.ids], LENGTH_BUCKETS[-1], 1)
    tokens = np.asarray(read_own_output(graphdef, params, src, lengths)[0], np.int32)
    fed = np.concatenate([np.full((1, 1), BOS_ID, np.int32), tokens[:, :-1]], axis=1)
    arrays = encdec_arrays(params, src, lengths, fed, tokens, graphdef=graphdef, method=method, steps=steps)
    output = tuple(dates.TARGET_VOCAB[int(i)] for i in tokens[0])
    meta = {
        "input": source.text,
        "output": dates.decode_target(tokens[0]),
        "truncated": source.truncated,
        "attention": "cross",
    }
    return as_numpy(arrays), len(output), len(source.ids), output, source.labels, meta


def attribution_record(
    architecture: str, method: str, model: Any, inputs: Any, *, steps: int = 64, mechanism: str = "attribution"
) -> AttentionRecord:
    """Returns the method's record for one input (see the module's docstring for axes and rows).

    model: the architecture's runner (encoder, decoder) or (graphdef, params) / None (encdec); inputs: a text
    (the encoder: also a (text, pair) tuple). steps: integrated gradients' quadrature points.
    """
    check_applies(method, architecture)
    build = {"encoder": _encoder, "decoder": _decoder, "encdec": _encdec}[architecture]
    arrays, rows, keys, query_labels, key_labels, meta = build(method, model, inputs, steps)
    weights = arrays.pop("weights")
    extras: dict[str, Any] = {}
    if method in GRADIENT:
        weights = weights[:rows, :keys]
        axes: tuple[str, ...] = ("query", "key")
        extras["targets"] = arrays["targets"][:rows]
        if "completeness_gap" in arrays:
            extras["completeness_gap"] = arrays["completeness_gap"][:rows]
    else:
        weights = weights[:, :rows, :keys]
        axes = ("layer", "query", "key")
    if "per_layer" in arrays:
        extras["per_layer"] = arrays["per_layer"][:, :rows, :keys]
        extras["reconstruction_error"] = arrays["reconstruction_error"]
    meta = {
        **meta,
        "method": method,
        "architecture": architecture,
        # What a row is: gradient methods are signed; the others are ≥ 0 and need not sum to 1 (α's rows do).
        "rows": "signed" if method in GRADIENT else "unnormalised",
        "paper": PAPERS[method],
        "aggregate": "rollout to each layer"
        if method in ROLLED_OUT
        else "per layer"
        if axes[0] == "layer"
        else "whole model",
    }
    if method in GRADIENT or method == "chefer":
        meta["target"] = TARGETS[architecture]
    if method in ("integrated-gradients", "occlusion"):
        meta["baseline"] = BASELINES[architecture]
        meta["steps"] = steps if method == "integrated-gradients" else None
    return AttentionRecord(
        mechanism, np.ascontiguousarray(weights), axes, query_labels, key_labels, meta=meta, extras=extras
    )


def builder(architecture: str):
    """Returns a registry builder (mechanism, options) -> record for the architecture: options text
    (text_pair for the encoder), method, model_dir (encoder, decoder), step (encdec, a training snapshot)."""

    def build(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
        from models.model_folders import model_dir_option

        method = options.get("method", "integrated-gradients")
        check_applies(method, architecture)
        if architecture == "encoder":
            from models.transformer.records import shared_runner

            model, inputs = shared_runner(model_dir_option(options)), (options["text"], options.get("text_pair"))
        elif architecture == "decoder":
            from models.lm.records import shared_runner as lm_runner

            model, inputs = lm_runner(model_dir_option(options)), options["text"]
        else:
            from models.encdec.records import weights_at

            model, inputs = weights_at(options.get("step")), options["text"]
        return attribution_record(architecture, method, model, inputs, mechanism=getattr(mechanism, "id", mechanism))

    return build


# The registry's builders (module:function strings name them), one per architecture.
encoder_attribution_record = builder("encoder")
decoder_attribution_record = builder("decoder")
encdec_attribution_record = builder("encdec")


def final_map(record: AttentionRecord) -> np.ndarray:
    """Returns an attribution record's one [query, key] map: the last layer's (rolled out where the method rolls
    out), or the whole model's for the gradient methods."""
    return np.asarray(record.weights[-1] if record.axes[0] == "layer" else record.weights)
