"""Induction figures, checked on the figure objects: how many positions each axis labels."""

import numpy as np

from models.record import AttentionRecord
from viz import induction as iv


def record(length: int) -> AttentionRecord:
    rng = np.random.default_rng(length)
    w = rng.random((2, 2, length, length)).astype(np.float32)
    w /= w.sum(-1, keepdims=True)
    tokens = ["[BOS]", *[f"t{i % 7}" for i in range(length - 1)]]
    meta = {"induction_head": (1, 0), "predictions": [f"p{i}" for i in range(length)],
            "copies_from": list(range(length)), "copied": [i % 2 == 0 for i in range(length)]}
    return AttentionRecord("induction", w, ("layer", "head", "query", "key"), tokens, tokens,
                           meta=meta, extras={"tokens": np.arange(length) % 7})


def test_a_long_head_view_labels_every_kth_position_and_keeps_every_cell():
    r = record(63)
    fig = iv.head_pattern(r, 1, 0)
    x, y = fig.layout.xaxis, fig.layout.yaxis
    assert list(x.tickvals) == list(range(0, 63, 2)) == list(y.tickvals)  # 32 labels a side, not 63
    assert list(x.ticktext) == [r.key_labels[i] for i in range(0, 63, 2)]
    assert np.asarray(fig.data[0].z).shape == (63, 63)
    assert np.asarray(fig.data[0].customdata).shape == (63, 63, 2)  # hover still names every cell's tokens


def test_a_short_head_view_and_any_copy_view_label_every_position():
    short = iv.head_pattern(record(iv.PATTERN_TICKS), 0, 1)
    assert list(short.layout.xaxis.tickvals) == list(range(iv.PATTERN_TICKS))
    typed = iv.copy_view(record(63))
    assert len(typed.layout.yaxis.ticktext) == 63 and typed.layout.yaxis.ticktext[5] == "t4 → p5"


def test_snapshot_note_places_a_step_against_the_phase_change():
    record = AttentionRecord("i", np.zeros((1, 1, 4)), ("score", "head", "step"), ["p"], ["0", "1", "2", "3"],
                             extras={"steps": np.array([0, 100, 200, 300]),
                                     "repeated_loss": np.array([4.0, 3.0, 1.0, 0.5])},
                             meta={"mixture_from": 200})
    assert iv.snapshot_note(record, 50, (100, 200)) == (
        "Step 50: before the phase change (steps 100–200); loss on the repeated half 3.50 nats.")
    assert "during the phase change" in iv.snapshot_note(record, 150, (100, 200))
    late = iv.snapshot_note(record, 300, (100, 200))
    assert "after the phase change (steps 100–200), with short repeats in the training data" in late
    assert late.endswith("0.50 nats.")
    assert "no phase change" in iv.snapshot_note(record, 0, None)


def test_the_shared_curves_figure_is_not_written_to_by_a_rerun():
    # pages/induction.py caches one curves figure for every session and applies the axis settings
    # of ui.widgets.show_panels before sharing it: applying them again (each rerun) changes nothing.
    import json

    from models.induction.records import training_record
    from models.registry import INDUCTION, mechanisms_on_page
    from viz.margins import reserve_tick_margins

    record = training_record(mechanisms_on_page(INDUCTION.file)[0].id)
    fig = reserve_tick_margins(iv.training_curves(record))
    before = json.dumps(fig.to_plotly_json(), sort_keys=True, default=str)
    assert fig.layout.margin.l is not None
    reserve_tick_margins(fig)
    assert json.dumps(fig.to_plotly_json(), sort_keys=True, default=str) == before
