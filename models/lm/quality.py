"""Quality of the GPT trained here (checkpoints/lm/), measured on text it was not trained on.

- Perplexity on the held-out pages (models/lm/task.py split_of) against a bigram baseline: an
  add-k smoothed bigram over the same tokenizer's ids, counted on the training pages; k is the
  best of K_GRID on the held-out text itself, so the baseline is at its best.
- Head scores (models/heads/detectors.py, TransformerLens's and Olsson et al.'s definitions):
  prefix-matching on [BOS] + r + r of random tokens (an induction head: goal 0.4; a head that
  ignores content scores about 1/T), previous-token (Σ A·P / Σ A over held-out text windows), and
  each head's share of attention on the first token ([BOS], where heads park attention).
- The training log (checkpoints/lm/training_log.json): loss and every head's scores about
  twenty times during training, so the page can show the induction head forming.

``report(quick)`` re-measures everything: it needs Debian's python3-doc for the full held-out
text and the bigram's counts; without it, it measures on the committed held-out sample
(tests/fixtures/lm_heldout_sample.json, which carries the bigram counts it needs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.checkpoint import CHECKPOINT_ROOT
from models.heads import detectors as hd
from models.lm import task
from models.lm.tokenizer import EOT_ID
from models.record import AttentionRecord
from models.text import N_, Notice

CHECKPOINT_DIR = CHECKPOINT_ROOT / "lm"
LOG_FILE = "training_log.json"
SAMPLE_FILE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "lm_heldout_sample.json"
GOAL = 0.4  # prefix-matching score of an induction head (random ≈ 1/T)
HALF = 50  # r of 50 random tokens: [BOS] + r + r is 101 tokens
COUNT = 16
PROBE_SEED = 20_220_308
K_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
SCORES = ("prefix_matching", "previous", "first_token")
SCORE_TITLES = {"prefix_matching": "prefix-matching", "previous": "previous-token", "first_token": "first-token share"}


# ------------------------------------------------------------------ the bigram baseline


def bigram_counts(stream: np.ndarray, vocab: int) -> np.ndarray:
    """Returns int64 [V, V]: how often token b follows token a in the stream (row a, column b)."""
    stream = np.asarray(stream, np.int64)
    return np.bincount(stream[:-1] * vocab + stream[1:], minlength=vocab * vocab).reshape(vocab, vocab)


def bigram_nll(pair_counts: np.ndarray, row_totals: np.ndarray, vocab: int, k: float) -> np.ndarray:
    """Returns float64 [N]: −log p(b | a) = −log((c(a, b) + k) / (c(a) + k·V)) per predicted pair.

    pair_counts [N]: c(a, b) of each pair; row_totals [N]: c(a) = Σ_b c(a, b) of its first token."""
    return -(np.log(np.asarray(pair_counts, np.float64) + k) - np.log(np.asarray(row_totals, np.float64) + k * vocab))


def predicted_pairs(windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Returns (previous, next) int64 [N]: every (token, its successor) a window predicts, in order."""
    windows = np.asarray(windows, np.int64)
    return windows[:, :-1].ravel(), windows[:, 1:].ravel()


def best_bigram(counts: np.ndarray, windows: np.ndarray) -> tuple[float, float]:
    """Returns (perplexity, k) of the add-k bigram on the windows' predicted tokens, best k of K_GRID."""
    prev, nxt = predicted_pairs(windows)
    vocab = counts.shape[0]
    pair, row = counts[prev, nxt], counts.sum(1)[prev]
    nll = {k: float(bigram_nll(pair, row, vocab, k).mean()) for k in K_GRID}
    k = min(nll, key=nll.get)
    return float(np.exp(nll[k])), k


# ------------------------------------------------------------------ the model's measurements


def next_token_nll(logits: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Returns float64 [B, T − 1]: −log p(windows[:, t + 1] | windows[:, ..t]).  logits [B, T, V]."""
    logits = np.asarray(logits, np.float64)[:, :-1]
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, np.asarray(windows, np.int64)[:, 1:, None], axis=-1)[..., 0]


def model_outputs(graphdef, state, windows: np.ndarray, *, batch: int = 16, attention: bool = True):
    """Yields (rows, logits [b, T, V], attention [b, L, H, T, T] or None) for each batch of windows."""
    from models.lm.model import run

    for start in range(0, len(windows), batch):
        rows = np.asarray(windows[start : start + batch])
        logits, maps = run(graphdef, state, rows, attention=attention)
        yield rows, logits, None if maps is None else np.moveaxis(maps, 0, 1)


def perplexity(graphdef, state, windows: np.ndarray, *, batch: int = 16) -> float:
    """Returns exp(mean −log p) of every predicted token of the windows."""
    total, count = 0.0, 0
    for rows, logits, _ in model_outputs(graphdef, state, windows, batch=batch, attention=False):
        nll = next_token_nll(logits, rows)
        total, count = total + float(nll.sum()), count + nll.size
    return float(np.exp(total / count))


def repeated_probe(vocab: int, bos: int, *, half: int = HALF, count: int = COUNT, seed: int = PROBE_SEED) -> np.ndarray:
    """Returns int64 [count, 1 + 2·half]: [BOS] + r + r, r uniform over the ids other than BOS."""
    rng = np.random.default_rng(seed)
    rows = np.stack([hd.repeated_sequence(rng, half, vocab - 1, bos=0) for _ in range(count)])
    rows[:, 1:] += rows[:, 1:] >= bos  # ids 1..V−1 drawn for 0..V−2 skipping BOS
    rows[:, 0] = bos
    return rows


def probe_half(positions: int) -> int:
    """Returns |r| of the probe [BOS] + r + r for a model of this many positions: HALF, or less to fit."""
    return max(1, min(HALF, (positions - 1) // 2))


def first_token_share(maps: np.ndarray) -> np.ndarray:
    """Returns float64 [...]: the mean over queries 1..T−1 of the attention on key 0.  maps [..., T, T]."""
    return np.asarray(maps, np.float64)[..., 1:, 0].mean(-1)


def previous_token_score(maps: np.ndarray) -> np.ndarray:
    """Returns float64 [...]: Σ A·P / Σ A with P the previous-token pattern.  maps [..., T, T]."""
    return hd.head_score(maps, hd.previous_token_pattern(maps.shape[-1])).astype(np.float64)


@dataclass(frozen=True)
class HeadScores:
    """Every head's scores, [L, H] each: prefix-matching on [BOS] + r + r, previous-token and
    first-token share on text windows (means over the sequences)."""

    prefix_matching: np.ndarray
    previous: np.ndarray
    first_token: np.ndarray
    random_baseline: float  # a content-blind head's prefix-matching score, mean of 1/(t+1) over the queries

    def best(self, name: str) -> tuple[tuple[int, int], float]:
        """Returns ((layer, head), score) of the head with the highest score of this name."""
        values = getattr(self, name)
        layer, head = np.unravel_index(int(np.argmax(values)), values.shape)
        return (int(layer), int(head)), float(values[layer, head])

    def as_json(self) -> dict[str, list]:
        return {name: np.round(getattr(self, name), 4).tolist() for name in SCORES}


def head_scores(graphdef, state, text_windows: np.ndarray, probe: np.ndarray, half: int = HALF) -> HeadScores:
    """Returns every head's scores: prefix-matching on the probe ([BOS] + r + r rows), previous-token and
    first-token share on text_windows (int [W, T])."""
    matching = np.concatenate([hd.prefix_matching_score(maps, half) for _, _, maps in
                               model_outputs(graphdef, state, probe)]).mean(0)
    previous, first = [], []
    for _, _, maps in model_outputs(graphdef, state, text_windows):
        previous.append(previous_token_score(maps))
        first.append(first_token_share(maps))
    queries = np.arange(half + 1, 2 * half + 1)
    return HeadScores(matching.astype(np.float64), np.concatenate(previous).mean(0), np.concatenate(first).mean(0),
                      float(np.mean(1.0 / (queries + 1))))


# ------------------------------------------------------------------ the committed model and its log


def load_log(folder: Path = CHECKPOINT_DIR) -> dict:
    """Returns the training log written beside the checkpoint."""
    return json.loads((Path(folder) / LOG_FILE).read_text(encoding="utf-8"))


def emergence_step(log: Mapping, goal: float = GOAL) -> int | None:
    """Returns the first logged step at which some head's prefix-matching score reached goal, or None."""
    for step, scores in zip(log["step"], log["prefix_matching"]):
        if np.max(scores) >= goal:
            return int(step)
    return None


def load_sample(path: Path = SAMPLE_FILE) -> dict:
    """Returns the committed held-out sample: its pages' text and the bigram counts its pairs need."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def sample_bigram_perplexity(sample: Mapping, windows: np.ndarray) -> float:
    """Returns the add-k bigram's perplexity on the sample's windows, from the counts the sample carries."""
    pairs = {tuple(map(int, key.split(","))): c for key, c in sample["bigram"]["pairs"].items()}
    rows = {int(key): c for key, c in sample["bigram"]["rows"].items()}
    prev, nxt = predicted_pairs(windows)
    counts = np.array([pairs.get((a, b), 0) for a, b in zip(prev, nxt)])
    totals = np.array([rows.get(a, 0) for a in prev])
    nll = bigram_nll(counts, totals, sample["bigram"]["vocab"], sample["bigram"]["k"])
    return float(np.exp(nll.mean()))


def sample_from(tokenizer, pages: Sequence, counts: np.ndarray, k: float, *, chars: int) -> dict:
    """Returns the held-out sample's content: the first `chars` characters of the pages (whole
    paragraphs), and the bigram counts (train split) of every pair the sample predicts."""
    from models.lm.tokenizer import encode_plain

    texts, names, used = [], [], 0
    for page in pages:
        paragraphs = []
        for paragraph in page.text.split("\n"):
            if used + len(paragraph) > chars:
                break
            paragraphs.append(paragraph)
            used += len(paragraph) + 1
        if paragraphs:
            texts.append("\n".join(paragraphs))
            names.append(page.name)
        if used >= chars * 0.95:
            break
    stream = task.token_stream(encode_plain(tokenizer, texts), EOT_ID)
    prev, nxt = stream[:-1].astype(np.int64), stream[1:].astype(np.int64)
    totals = counts.sum(1)
    return {"source": f"Debian {task.PACKAGE}: held-out pages, cleaned by models/lm/task.py", "licence": task.LICENCE,
            "pages": names, "texts": texts,
            "bigram": {"vocab": int(counts.shape[0]), "k": k,
                       "rows": {str(a): int(totals[a]) for a in sorted(set(prev.tolist()))},
                       "pairs": {f"{a},{b}": int(counts[a, b]) for a, b in sorted(set(zip(prev.tolist(), nxt.tolist())))
                                 if counts[a, b]}}}


def head_names(layers: int, heads: int) -> list[str]:
    """Returns ["L0H0", "L0H1", ...], layer-major, the order of a flattened [L, H] score."""
    return [f"L{layer}H{head}" for layer in range(layers) for head in range(heads)]


def training_record(folder: Path = CHECKPOINT_DIR, mechanism_id: str = "lm") -> AttentionRecord:
    """Returns the record of the training curves: weights [score, head, step] = every head's
    prefix-matching, previous-token and first-token share at every logged step; extras steps, loss,
    heldout_loss; meta heads, goal, baseline, best_head (the final best prefix-matching head: its index in
    heads) and best ([layer, head]), emerged_step (the first logged step some head reached the goal, or None)."""
    info = load_log(folder)
    log = info["log"]
    steps = np.asarray(log["step"], np.int64)
    scores = np.stack([np.asarray(log[name], np.float32).reshape(len(steps), -1).T for name in SCORES])
    layers, heads = np.asarray(log["prefix_matching"][-1]).shape
    names = head_names(layers, heads)
    half = info["probe"]["half"]
    queries = np.arange(half + 1, 2 * half + 1)
    return AttentionRecord(
        mechanism=mechanism_id, weights=scores, axes=("score", "head", "step"),
        query_labels=tuple(SCORE_TITLES[s] for s in SCORES), key_labels=tuple(f"{h} @ {s}" for h in names for s in steps),
        meta={"heads": names, "shown": "head scores over training", "goal": GOAL,
              "baseline": float(np.mean(1.0 / (queries + 1))), "best_head": int(np.argmax(scores[0, :, -1])),
              "best": [int(x) for x in divmod(int(np.argmax(scores[0, :, -1])), heads)], "emerged_step": emergence_step(log),
              "probe": info["probe"], "heldout": info["heldout"], "command": info["command"]},
        extras={"steps": steps, "loss": np.asarray([np.nan if x is None else x for x in log["loss"]], np.float32),
                "heldout_loss": np.asarray(log["heldout_loss"], np.float32)},
    )


FAMILIAR_MARGIN = 1.5  # nats per token above the held-out loss: e^1.5 ≈ 4.5 times the held-out perplexity


def familiarity_notice(loss_nats: float | None, heldout_perplexity: float, margin: float = FAMILIAR_MARGIN) -> Notice | None:
    """Returns one line when a text's mean next-token loss lies `margin` nats above the held-out
    text's (the model finds it much less predictable than the documentation it learnt), else None."""
    if loss_nats is None:
        return None
    heldout = float(np.log(heldout_perplexity))
    if loss_nats <= heldout + margin:
        return None
    return Notice(N_("This text lies outside what the model knows: {loss:.1f} nats per token, against {heldout:.1f} on "
                     "held-out pages of the Python documentation it was trained on, so its heads may behave unlike on "
                     "familiar text."), loss=loss_nats, heldout=heldout)


# ------------------------------------------------------------------ the report (python -m models.quality lm)


def _heldout(tokenizer, positions: int, vocab: int, quick: bool):
    # -> (windows, bigram perplexity, k, where the text came from). The full held-out pages and the
    # training pages' bigram need Debian's python3-doc; without it, the committed sample and its counts.
    from models.lm.tokenizer import encode_plain

    try:
        pages = task.split_documents(task.load_documents())
    except SystemExit as missing:
        sample = load_sample()
        stream = task.token_stream(encode_plain(tokenizer, sample["texts"]), EOT_ID)
        windows = task.eval_windows(stream, positions, EOT_ID, limit=20 if quick else None)
        return (windows, sample_bigram_perplexity(sample, windows), sample["bigram"]["k"],
                f"the committed held-out sample ({len(sample['pages'])} pages; {missing})")
    streams = {s: task.token_stream(encode_plain(tokenizer, [p.text for p in pages[s]]), EOT_ID)
               for s in ("train", "heldout")}
    windows = task.eval_windows(streams["heldout"], positions, EOT_ID, limit=40 if quick else None)
    counts = bigram_counts(streams["train"], vocab)
    bigram, k = best_bigram(counts, windows)
    return windows, bigram, k, f"the {len(pages['heldout'])} held-out pages of Debian's {task.PACKAGE}"


def _spacings(steps: Sequence[int]) -> str:
    """Returns how far apart the logged steps lie, run by run: "every 300 steps to 6000, every 800 to 22000"."""
    parts: list[str] = []
    for previous, step in zip(steps, steps[1:]):
        gap = step - previous
        if parts and parts[-1][0] == gap:
            parts[-1] = (gap, step)
        else:
            parts.append((gap, step))
    return ", ".join(f"every {gap} steps to {end}" for gap, end in parts)


def report(quick: bool = False, folder: Path = CHECKPOINT_DIR) -> str:
    """Returns the Markdown tables of the committed GPT's quality (or another folder's, with its
    training log): held-out perplexity against the bigram, every head's scores, the training log's figures."""
    from models.lm.loader import load_folder

    lm = load_folder(folder)
    cfg = lm.config
    windows, bigram, k, source = _heldout(lm.tokenizer, cfg.max_positions, cfg.vocab_size, quick)
    ours = perplexity(lm.graphdef, lm.state, windows)
    half = probe_half(cfg.max_positions)
    probe = repeated_probe(cfg.vocab_size, EOT_ID, half=half, count=4 if quick else COUNT)
    scores = head_scores(lm.graphdef, lm.state, windows[: 8 if quick else 64], probe, half)
    info = load_log(folder)
    log = info["log"]
    lines = [
        f"model: GPT-2, {cfg.num_layers} layers × {cfg.num_heads} heads, width {cfg.hidden_size}, "
        f"{cfg.max_positions} positions, vocabulary {cfg.vocab_size}; trained {info['steps']} steps, batch "
        f"{info['batch']}, peak lr {info['lr']}, {info['train_seconds'] / 60:.1f} min (`{info['command']}`)",
        "", f"Held-out text: {source}, {windows.shape[0] * (windows.shape[1] - 1):,} predicted tokens"
        + (" (quick: a few windows)" if quick else ""), "",
        "| model | perplexity | nats per token |", "|---|---|---|",
        f"| the GPT trained here | {ours:.2f} | {np.log(ours):.3f} |",
        f"| add-k bigram, k = {k} (counted on the training pages) | {bigram:.2f} | {np.log(bigram):.3f} |",
        "", f"Every head: prefix-matching on {probe.shape[0]} sequences [BOS] + r + r (|r| = {half}, random tokens; "
        f"a content-blind head ≈ {scores.random_baseline:.3f}); previous-token and first-token share on "
        f"{min(len(windows), 8 if quick else 64)} held-out windows", "",
        "| head | prefix-matching | previous-token | first-token share |", "|---|---|---|---|",
    ]
    for layer in range(cfg.num_layers):
        for head in range(cfg.num_heads):
            lines.append(f"| L{layer}H{head} | {scores.prefix_matching[layer, head]:.3f} | "
                         f"{scores.previous[layer, head]:.3f} | {scores.first_token[layer, head]:.3f} |")
    (bl, bh), best = scores.best("prefix_matching")
    emerged = emergence_step(log)
    lines += ["", "| figure (training log, checkpoints/lm/training_log.json) | value |", "|---|---|",
              f"| logged steps | {len(log['step'])}: {_spacings(log['step'])} |",
              f"| best prefix-matching head now | L{bl}H{bh}, {best:.3f} (goal {GOAL}) |",
              f"| first logged step with a head ≥ {GOAL} | {'never' if emerged is None else emerged} |",
              f"| held-out loss on the log's windows, first → last | {log['heldout_loss'][0]:.3f} → "
              f"{log['heldout_loss'][-1]:.3f} nats |",
              f"| held-out perplexity at the end of training (all pages) | {info['heldout']['perplexity']:.2f} "
              f"(bigram {info['heldout']['bigram_perplexity']:.2f}) |"]
    return "\n".join(lines)
