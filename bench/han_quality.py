"""Quality of the committed HAN checkpoint: held-out generated reviews and hand-written ones.

    python bench/han_quality.py [--documents 1000]

Prints a Markdown table (the bars are those of tests/models/test_han_quality.py).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.han.checkpoint import CHECKPOINT  # noqa: E402
from models.han.data import encode_document  # noqa: E402
from models.han.quality import HELD_OUT_SEED, load_plain_reviews, plain_quality, review_quality, top_words  # noqa: E402
from models.han.records import HANPredictor  # noqa: E402
from models.han.task import generate_reviews  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1000)
    args = parser.parse_args()
    predictor = HANPredictor.from_checkpoint(CHECKPOINT)
    reviews = generate_reviews(args.documents, HELD_OUT_SEED)
    predictor.run_batch([encode_document(r.text) for r in reviews[:8]])  # compile outside the timing
    start = time.perf_counter()
    quality = review_quality(predictor, reviews)
    seconds = time.perf_counter() - start
    plain_reviews = load_plain_reviews()
    plain = plain_quality(predictor, plain_reviews)
    bars = {"sentiment accuracy": 0.95, "topic accuracy": 0.95, "top-attended sentence is label-bearing": 0.85,
            "top-3 words of that sentence include a label word": 0.85}
    print(f"Checkpoint {CHECKPOINT.relative_to(CHECKPOINT.parents[2])}: {predictor.meta.get('trained_on', '?')}, "
          f"trained in {predictor.meta.get('training_seconds', '?')} s")
    print()
    print(f"| measure | held-out generated ({quality.documents}) | bar |")
    print("|---|---|---|")
    for name, value in quality.rows():
        print(f"| {name} | {value:.1%} | ≥ {bars[name]:.0%} |")
    print()
    print(f"| measure | hand-written reviews ({plain.documents}) | bar |")
    print("|---|---|---|")
    print(f"| top-attended sentence is the opinion sentence | {plain.top_sentence_is_opinion:.0%} "
          f"({round(plain.top_sentence_is_opinion * plain.documents)}/{plain.documents}) | all (aim) |")
    print(f"| sentiment accuracy | {plain.sentiment_accuracy:.0%} | (reported) |")
    print(f"| topic accuracy | {plain.topic_accuracy:.0%} | (reported) |")
    print()
    print(f"Inference: {quality.documents} documents in {seconds:.2f} s "
          f"({1000 * seconds / quality.documents:.1f} ms per document, batches of 8, 2 shared cores)")
    for miss in plain.misses:
        print(f"  hand-written miss, top sentence: {miss}")
    results = predictor.run_batch([encode_document(r["text"]) for r in plain_reviews[:5]])
    print()
    print("Top-3 words of the top sentence, first five hand-written reviews:")
    for result in results:
        print(f"  {', '.join(top_words(result))}")


if __name__ == "__main__":
    main()
