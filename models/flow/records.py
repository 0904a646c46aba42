"""Registry builders of the flow graph: user input → AttentionRecord, one jitted forward each.

    flow_record(mechanism, {"text": "...", "threshold": 0.04, "position": -1})           # a decoder LM
    encoder_flow_record(mechanism, {"text": "...", "threshold": 0.04, "position": 0})    # MiniLM

The record's weights are the attention edges ("layer", "query", "key"): edge X[l]_key → M[l]_query weighs the
summed parts of every head (models/flow/graph.py). Extras: head_edges [layer, head, query, key] (the heads of
each edge), head_totals [layer, head], residual_attention [layer, token], ffn and residual_ffn [layer, token]
(decoders with a feed-forward network, encoders), visible [layer, query, key], and the route traced back from
`position` at `threshold`: route_nodes [layer + 1, token] (X), route_mid [layer, token] (M), route_edges,
route_residual_attention, route_ffn, route_residual_ffn and route_heads [layer, head].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from models.flow.graph import DEFAULT_THRESHOLD, FlowGraph, route_extras, trace
from models.model_folders import model_dir_option
from models.record import AttentionRecord, InputError

MECHANISM = "flow"
AXES = ("layer", "query", "key")
MAX_FLOW_TOKENS = 256  # a longer text is cut here: the graph reads H × T² part vectors of width D per layer
NODES = (
    "X[l]: the residual stream entering block l (X[L]: after the last); M[l]: between block l's attention "
    "and its feed-forward network; C[l] (an encoder–decoder's decoder): after its cross-attention, before the FFN"
)


def read_position(value: Any, tokens: int) -> int:
    """Returns the position a (possibly negative) option names; InputError when it is outside the text."""
    position = int(value)
    if not -tokens <= position < tokens:
        raise InputError(
            f"position must be from {-tokens} to {tokens - 1} for this text of {tokens} tokens; got {position}"
        )
    return position % tokens


def read_threshold(value: Any) -> float:
    """Returns the threshold (0 to 1; an edge is kept when its weight is above it; 0 keeps every edge)."""
    threshold = float(DEFAULT_THRESHOLD if value is None else value)
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"threshold must be from 0 to 1; got {threshold}")
    return threshold


def graph_record(
    mechanism_id: str,
    graph: FlowGraph,
    labels: Sequence[str],
    position: int,
    threshold: float,
    meta: Mapping[str, Any],
    extras: Mapping[str, Any],
) -> AttentionRecord:
    """Returns the record of a graph and its route from `position` at `threshold` (see the module doc)."""
    route = trace(graph, position, threshold)
    num_layers, num_heads = graph.heads.shape[:2]
    on_route = [f"L{a}H{b}" for a, b in zip(*np.nonzero(route.heads))]
    full_meta = {
        **meta,
        "num_layers": int(num_layers),
        "num_heads": int(num_heads),
        "position": int(position),
        "threshold": float(threshold),
        "has_ffn": graph.ffn is not None,
        "nodes": NODES,
        "route_heads": on_route,
        "value": "edge weight: the part's share of the sum it enters, max(0, ‖whole‖₁ − ‖whole − part‖₁) normalised",
    }
    return AttentionRecord(
        mechanism_id,
        graph.edges.astype(np.float32),
        AXES,
        labels,
        labels,
        meta=full_meta,
        extras={**extras, **route_extras(graph, route)},
    )


# ----------------------------------------------------------------------------- decoders


def decoder_graph(lm, ids: np.ndarray, buckets: Sequence[int]) -> tuple[FlowGraph, np.ndarray, np.ndarray]:
    """Returns (graph, predicted ids [T], their probabilities [T]) of token ids [T] through a LoadedLM."""
    from models.flow.decoder import flow, graph_of
    from models.lm.forward import pad_ids

    padded, mask = pad_ids(np.asarray(ids)[None], buckets)
    out = flow(lm.state, padded, mask, graphdef=lm.graphdef)
    tokens = len(ids)
    return graph_of(out, tokens), np.asarray(out["predicted"])[0, :tokens], np.asarray(out["probability"])[0, :tokens]


def flow_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: typed options text, model_dir (default: the GPT trained here), threshold, position
    (the prediction traced back; -1 = the last token)."""
    from models.lm.records import shared_runner
    from models.text import Notice

    runner = shared_runner(model_dir_option(options))
    encoding = runner.encode(options["text"])
    ids, labels, notices = encoding.ids, encoding.labels, list(encoding.notices)
    if len(ids) > MAX_FLOW_TOKENS:
        notices.append(f"the flow graph reads the first {MAX_FLOW_TOKENS} of {len(ids):,} tokens")
        ids, labels = ids[:MAX_FLOW_TOKENS], labels[:MAX_FLOW_TOKENS]
    threshold = read_threshold(options.get("threshold"))
    position = read_position(options.get("position", -1), len(ids))
    graph, predicted, probability = decoder_graph(runner.lm, ids, runner.buckets)
    cfg = runner.config
    meta = {
        "model": runner.name,
        "architecture": cfg.model_type,
        "notice": Notice.join(notices),
        "truncated": encoding.truncated or len(ids) < len(encoding.ids),
        "prediction": runner.lm.tokenizer.decode([int(predicted[position])]),
        "prediction_probability": float(probability[position]),
    }
    extras = {"input_ids": ids, "predicted": predicted.astype(np.int32)}
    return graph_record(getattr(mechanism, "id", MECHANISM), graph, labels, position, threshold, meta, extras)


def induction_graph(tokens: np.ndarray) -> tuple[FlowGraph, np.ndarray]:
    """Returns (graph, predicted ids [T]) of the committed induction model (checkpoints/induction), which runs
    the decoder forward through its decoder_view. tokens int [T]."""
    from models.flow.decoder import flow, graph_of
    from models.induction.model import decoder_view
    from models.induction.records import load_model

    cfg, graphdef, params, _ = load_model()
    tokens = np.asarray(tokens, np.int32)
    if not 1 <= len(tokens) <= cfg.max_length:
        raise InputError(f"the induction model reads 1 to {cfg.max_length} tokens; got {len(tokens)}")
    out = flow(params, tokens[None], np.ones((1, len(tokens)), bool), graphdef=graphdef, view=decoder_view)
    return graph_of(out, len(tokens)), np.asarray(out["predicted"])[0]


# ----------------------------------------------------------------------------- MiniLM


def encoder_flow_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: options text, text_pair (optional), model_dir (default: MiniLM), threshold, position
    (the token whose last-layer representation is traced back; default 0, [CLS])."""
    from models.flow.decoder import graph_of
    from models.flow.encoder import check_encoder, flow
    from models.transformer.records import shared_runner
    from models.transformer.tokenization import check_text

    check_text(options.get("text"))
    runner = shared_runner(model_dir_option(options))
    check_encoder(runner.config)
    encoding = runner.encode(options["text"], options.get("text_pair"))
    tokens = len(encoding.tokens)
    if tokens > MAX_FLOW_TOKENS:
        raise InputError(f"the flow graph reads at most {MAX_FLOW_TOKENS} tokens; this text has {tokens}: shorten it")
    threshold = read_threshold(options.get("threshold"))
    position = read_position(options.get("position", 0), tokens)
    ids, types, mask = runner.padded([encoding], 1)
    graph = graph_of(flow(runner.params, ids, types, mask, cfg=runner.config), tokens)
    meta = {
        "model": runner.name,
        "architecture": runner.config.model_type,
        "truncated": encoding.truncated,
        "notice": encoding.notice,
    }
    extras = {"input_ids": encoding.input_ids, "token_type_ids": encoding.token_type_ids}
    return graph_record(getattr(mechanism, "id", MECHANISM), graph, encoding.tokens, position, threshold, meta, extras)


# ----------------------------------------------------------------------------- the date Transformer


def encdec_flow_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Registry builder: options text (a date), threshold, position (the output character traced back; -1 = the
    last). Weights: the cross-attention edges [layer, output character, source character]; extras: the decoder's
    graph and route as for a decoder LM (with cross_head_edges, residual_cross, route_cross_* and route_memory, the
    memory nodes reached), and the encoder's, traced on from those memory nodes, under "encoder_" names."""
    from models.encdec.model import LENGTH_BUCKETS, batch_rows, pad_batch
    from models.encdec.records import weights_at
    from models.flow.encdec import flow, graphs_of
    from models.seq2seq import task as dates

    source = dates.encode_source(options["text"])
    threshold = read_threshold(options.get("threshold"))
    graphdef, params = weights_at(None)
    src, lengths = pad_batch([source.ids], LENGTH_BUCKETS[-1], batch_rows(1))
    out = flow(graphdef, params, src, lengths)
    encoder, decoder = graphs_of(out, len(source.ids))
    tokens = np.asarray(out["tokens"])[0]
    labels = tuple(dates.TARGET_VOCAB[int(i)] for i in tokens)
    position = read_position(options.get("position", -1), len(labels))
    record = graph_record(getattr(mechanism, "id", MECHANISM), decoder, labels, position, threshold, {}, {})
    route = trace(encoder, record.extras["route_memory"], threshold)
    extras = {**record.extras, **{f"encoder_{name}": value for name, value in route_extras(encoder, route).items()}}
    meta = {
        **record.meta,
        "model": "the date Transformer",
        "input": source.text,
        "output": dates.decode_target(tokens),
        "truncated": source.truncated,
        "notices": dates.decoding_notices(source, dates.decode_target(tokens)),
        "source_route_heads": [f"L{a}H{b}" for a, b in zip(*np.nonzero(route.heads))],
        "cross_route_heads": [f"L{a}H{b}" for a, b in zip(*np.nonzero(extras["route_cross_heads"]))],
    }
    return AttentionRecord(
        record.mechanism,
        decoder.cross_heads.sum(1).astype(np.float32),
        AXES,
        labels,
        source.labels,
        meta=meta,
        extras={**extras, "tokens": tokens.astype(np.int32)},
    )
