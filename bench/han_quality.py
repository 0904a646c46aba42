"""Quality of a HAN checkpoint, its shortcut probes, in-app training speed, and the features study.

    python bench/han_quality.py [--checkpoint FILE]     quality tables and the probe table
    python bench/han_quality.py --training-speed        in-app training ("train your own"): steps per second
    python bench/han_quality.py --features-study        trains one HAN per feature kind on the same
                                                        generated reviews and prints one row each

Prints Markdown tables (the bars are those of tests/models/han/test_quality.py). The features
study chooses nothing: it prints every figure, including the new hand-written set's, which
must not be used to pick a model (docs/models/han.md says how the committed one was chosen).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.han.checkpoint import CHECKPOINT  # noqa: E402
from models.han.data import encode_document, load_word_embeddings, parse_csv  # noqa: E402
from models.han.features import contextual_vectors  # noqa: E402
from models.han.probes import probe_markdown, probe_table  # noqa: E402
from models.han.quality import (  # noqa: E402
    HELD_OUT_SEED,
    NEW_REVIEWS,
    PLAIN_REVIEWS,
    calibrate_no_opinion,
    hand_written_quality,
    load_reviews,
    review_quality,
    says_no_opinion,
    top_words,
)
from models.han.records import HANPredictor  # noqa: E402
from models.han.task import generate_reviews  # noqa: E402

BARS = {"sentiment accuracy": 0.95, "topic accuracy": 0.90, "top-attended sentence is label-bearing": 0.90,
        "top-3 words of that sentence include a label word": 0.85}


def hand_written_rows(predictor: HANPredictor) -> list[str]:
    """Returns Markdown rows for both hand-written fixtures."""
    rows = ["| hand-written set | reviews | top sentence is an opinion | sentiment | topic | no-opinion reviews "
            "flagged | reviews with an opinion flagged |", "|---|---|---|---|---|---|---|"]
    for path in (PLAIN_REVIEWS, NEW_REVIEWS):
        reviews = load_reviews(path)
        q = hand_written_quality(predictor, reviews, says_no_opinion if predictor.no_opinion_spread else None)
        with_opinion = sum(bool(r["opinion"]) for r in reviews)
        flagged = "n/a" if q.no_opinion is None else f"{q.no_opinion:.0%} of {len(reviews) - with_opinion}"
        topic = "n/a" if q.topic is None else f"{q.topic:.0%}"
        rows.append(f"| {path.name} | {len(reviews)} | {q.top_sentence:.0%} ({round(q.top_sentence * with_opinion)}/"
                    f"{with_opinion}) | {q.sentiment:.0%} | {topic} | {flagged} | {q.false_alarms:.0%} |")
        rows.extend(f"|  | | miss {m} | | | | |" for m in q.misses)
    return rows


def quality_report(path: Path, documents: int) -> None:
    predictor = HANPredictor.from_checkpoint(path)
    reviews = generate_reviews(documents, HELD_OUT_SEED)
    predictor.run_batch([encode_document(r.text) for r in reviews[:8]])  # compile outside the timing
    start = time.perf_counter()
    quality = review_quality(predictor, reviews)
    seconds = time.perf_counter() - start
    print(f"Checkpoint {path}: {predictor.meta.get('trained_on', '?')}, trained in "
          f"{predictor.meta.get('training_seconds', '?')} s; no-opinion threshold {predictor.no_opinion_spread}")
    print(f"\n| measure | held-out generated with an opinion ({quality.documents}) | bar |\n|---|---|---|")
    for name, value in quality.rows():
        print(f"| {name} | {value:.1%} | ≥ {BARS[name]:.0%} |")
    print()
    print("\n".join(hand_written_rows(predictor)))
    print()
    print(probe_markdown(probe_table(predictor)))
    print(f"\nInference: {quality.documents} documents in {seconds:.2f} s ({1000 * seconds / quality.documents:.1f} ms "
          "per document with MiniLM's vectors, batches of 8, 2 shared cores)")
    results = predictor.run_batch([encode_document(r["text"]) for r in load_reviews(NEW_REVIEWS)[:5]])
    print("Top-3 words of the top sentence, first five new hand-written reviews: "
          + "; ".join(", ".join(top_words(r)) for r in results))


def training_speed(rows: int) -> None:
    """Prints in-app training's steps per second (after the compile) and its preparation time."""
    from models.han.train import OWN_BATCH, example_csv_bytes, start_own, train_own_epoch

    data = parse_csv(example_csv_bytes(count=rows))
    start = time.perf_counter()
    own = start_own(data.texts, data.labels, data.classes, epochs=3, data_name="bench")
    prepare = time.perf_counter() - start
    start = time.perf_counter()
    train_own_epoch(own)
    first, first_steps = time.perf_counter() - start, own.steps
    start = time.perf_counter()
    train_own_epoch(own)
    train_own_epoch(own)
    seconds = time.perf_counter() - start
    print(f"| rows | batch | reading the documents | epoch 1 (with the compile) | steps/s after the compile |\n"
          f"|---|---|---|---|---|\n| {rows} | {OWN_BATCH} | {prepare:.1f} s | {first:.1f} s ({first_steps} steps) | "
          f"{(own.steps - first_steps) / seconds:.1f} |")


class MemoContextual:
    """featurize(docs) for a predictor, remembering MiniLM's vectors of every sentence seen (the study
    measures several models on the same documents)."""

    def __init__(self, features: str, memo: dict):
        self.features, self.memo = features, memo

    def __call__(self, docs, dtype=np.float32):
        table = load_word_embeddings()
        missing = list({p for d in docs for p in d.pieces if p not in self.memo})
        self.memo.update(zip(missing, contextual_vectors(missing)))
        out = []
        for d in docs:
            rows = []
            for p in d.pieces:
                embedded, contextual = table[np.asarray(p, np.int64)], self.memo[p]
                rows.append({"embeddings": embedded, "contextual": contextual,
                             "both": np.concatenate([embedded, contextual], -1)}[self.features].astype(dtype))
            out.append(tuple(rows))
        return out


def _load_memo(cache: Path | None) -> dict:
    if cache is None or not cache.is_file():
        return {}
    with np.load(cache) as data:
        return {tuple(int(i) for i in key.split("-")): data[key] for key in data.files}


def _save_memo(memo: dict, cache: Path | None) -> None:
    if cache is not None:
        np.savez(cache, **{"-".join(map(str, key)): value.astype(np.float16) for key, value in memo.items()})


def features_study(documents: int, epochs: int, kinds: list[str], cache: Path | None, out: Path) -> None:
    """Trains one HAN per feature kind (the CLI's defaults otherwise), writes each to out/study-<kind>.safetensors
    (the same info as the CLI writes) and prints its figures. cache: an .npz of MiniLM vectors kept between runs."""
    from models.han.checkpoint import save_checkpoint
    from models.han.features import feature_dim
    from models.han.model import REVIEWS
    from models.han.train import SPREAD_WEIGHT, TRAIN_SEED, TrainState, review_targets, train_epochs

    memo = _load_memo(cache)
    reviews = generate_reviews(documents, TRAIN_SEED)
    docs = [encode_document(r.text) for r in reviews]
    start = time.perf_counter()
    MemoContextual("contextual", memo)(docs)
    print(f"MiniLM vectors of {len(memo)} distinct training sentences: {time.perf_counter() - start:.0f} s")
    targets, spread = review_targets(reviews)
    print("| features | train s | generated: sentiment / top sentence | probes, hand-written: colour top / no-opinion "
          "spread | no-opinion threshold | old 20: top / sentiment | new 48: top / sentiment / no-opinion flagged |")
    print("|---|---|---|---|---|---|---|")
    for kind in kinds:
        cfg = dataclasses.replace(REVIEWS, features=kind, embed_dim=feature_dim(kind))
        featurize = MemoContextual(kind, memo)
        train = TrainState.create(cfg, seed=TRAIN_SEED)
        start = time.perf_counter()
        losses = train_epochs(train, docs, targets, vectors=featurize(docs, np.float16), spread=spread, epochs=epochs,
                              seed=TRAIN_SEED)
        seconds = time.perf_counter() - start
        predictor = HANPredictor(cfg, train.graphdef, train.state, featurize=featurize)
        threshold, balanced = calibrate_no_opinion(predictor)
        _save_memo(memo, cache)
        predictor.no_opinion_spread = threshold
        save_checkpoint(out / f"study-{kind}.safetensors", train.state, cfg, {
            "trained_on": f"{documents} generated reviews, seed {TRAIN_SEED}, {epochs} epochs, batch 32, "
                          f"features {kind}, spread weight {SPREAD_WEIGHT}",
            "training_seconds": round(seconds), "epoch_losses": [round(x, 4) for x in losses],
            "no_opinion_spread": round(threshold, 4), "no_opinion_balanced_accuracy": round(balanced, 4)})
        generated = review_quality(predictor, generate_reviews(400, HELD_OUT_SEED))
        probes = {row.probe: row for row in probe_table(predictor)["hand_written"]}
        old = hand_written_quality(predictor, load_reviews(PLAIN_REVIEWS), says_no_opinion)
        new = hand_written_quality(predictor, load_reviews(NEW_REVIEWS), says_no_opinion)
        print(f"| {kind} | {seconds:.0f} | {generated.sentiment_accuracy:.0%} / {generated.top_sentence_label_bearing:.0%} "
              f"| {probes['neutral: colour'].top_sentence:.0%} / {probes['no opinion'].spread:.2f} | {threshold:.2f} | "
              f"{old.top_sentence:.0%} / {old.sentiment:.0%} | {new.top_sentence:.0%} / {new.sentiment:.0%} / "
              f"{new.no_opinion:.0%} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=CHECKPOINT)
    parser.add_argument("--documents", type=int, default=1000, help="held-out generated reviews")
    parser.add_argument("--training-speed", action="store_true")
    parser.add_argument("--rows", type=int, default=400, help="CSV rows for --training-speed")
    parser.add_argument("--features-study", action="store_true")
    parser.add_argument("--study-documents", type=int, default=3000)
    parser.add_argument("--study-epochs", type=int, default=4)
    parser.add_argument("--kinds", nargs="+", default=["contextual", "both", "embeddings"])
    parser.add_argument("--cache", type=Path, default=None, help="an .npz keeping MiniLM vectors between study runs")
    parser.add_argument("--out", type=Path, default=Path("runs/han"), help="where the study writes its models")
    args = parser.parse_args()
    if args.training_speed:
        training_speed(args.rows)
    elif args.features_study:
        args.out.mkdir(parents=True, exist_ok=True)
        features_study(args.study_documents, args.study_epochs, args.kinds, args.cache, args.out)
    else:
        quality_report(args.checkpoint, args.documents)


if __name__ == "__main__":
    main()
