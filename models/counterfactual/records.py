"""Registry builders of the 2019 tests: ``builder(mechanism, options) -> AttentionRecord``, the test named by the
entry's variant ("adversary", "permutation", "uniform"; the HAN's "han-adversary", "han-permutation": a family's
variants are unique), the model by the builder.

options: text (required); seed (the adversary's starts and the shuffles, default 0); for the HAN, level
("sentence" or "word") and sentence (whose word α; default the top-α one, 1-based as the page counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from models.counterfactual import han, seq2seq
from models.record import AttentionRecord, InputError

SEQ2SEQ_TESTS = {
    "adversary": seq2seq.adversary_record,
    "permutation": seq2seq.permutation_record,
    "uniform": seq2seq.uniform_record,
}
HAN_TESTS = {"adversary": han.adversary_record, "permutation": han.permutation_record}


def seq2seq_test_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one 2019 test (mechanism.variant) on the committed Bahdanau model."""
    test = SEQ2SEQ_TESTS[mechanism.variant]
    return _named(test(options["text"], seed=int(options.get("seed") or 0)), mechanism.id)


def han_test_record(mechanism, options: Mapping[str, Any]) -> AttentionRecord:
    """Returns the record of one 2019 test (mechanism.variant) on the committed HAN."""
    test = HAN_TESTS[mechanism.variant.removeprefix("han-")]
    level = str(options.get("level") or "sentence")
    if level not in han.LEVELS:
        raise InputError(f"level must be one of {', '.join(han.LEVELS)}, not {level!r}")
    sentence = options.get("sentence")
    index = None if sentence is None else int(sentence) - 1
    doc_sentences = len(han.encode_document(options["text"]).sentences)
    if index is not None and not 0 <= index < doc_sentences:
        raise InputError(f"sentence must be 1 to {doc_sentences}: the text has {doc_sentences} sentence(s)")
    return test(options["text"], level, index, seed=int(options.get("seed") or 0), mechanism=mechanism.id)


def _named(record: AttentionRecord, mechanism_id: str) -> AttentionRecord:
    # The seq2seq builders name the record after the variant they ran; the registry wants its entry's id.
    from dataclasses import replace

    return replace(record, mechanism=mechanism_id)
