"""Quality of the committed induction model: an induction head (prefix matching >= 0.4, random ≈
1/T) that forms inside the drop of the repeated-half loss, and that copies short repeats (held-out
[BOS] + r + r of 3–8 tokens, and the hand-typed repeats of tests/fixtures/induction_typed.json,
written before the model was trained); and the measurement helpers against loop oracles."""

import json
from pathlib import Path

import numpy as np
import pytest

from models.heads import detectors as hd
from models.induction import quality, task
from models.induction.records import load_model, load_model_snapshots


def test_half_losses_match_a_loop_oracle():
    rng = np.random.default_rng(0)
    half = 4
    tokens = task.repeated_batch(1, 3, half)
    logits = rng.normal(size=(3, 1 + 2 * half, len(task.VOCAB)))
    first, repeated = quality.half_losses(logits, tokens, half)
    nll = np.zeros((3, 2 * half))
    for b in range(3):
        for t in range(2 * half):  # position t predicts token t + 1
            z = logits[b, t] - logits[b, t].max()
            nll[b, t] = -(z[tokens[b, t + 1]] - np.log(np.exp(z).sum()))
    assert first == pytest.approx(nll[:, :half].mean())  # tokens 1..half: the first copy
    assert repeated == pytest.approx(nll[:, half + 1 :].mean())  # tokens half+2..2·half


def test_head_scores_are_batch_means_of_the_shared_detectors():
    rng = np.random.default_rng(1)
    half = 5
    tokens = task.repeated_batch(2, 3, half)
    w = rng.random((3, 2, 2, 11, 11)) * np.tri(11)
    w /= w.sum(-1, keepdims=True)
    scores = quality.head_scores(w, tokens, half)
    assert set(scores) == set(quality.SCORES) and scores["previous"].shape == (2, 2)
    want = np.mean([hd.head_score(w[b], hd.duplicate_token_pattern(tokens[b])) for b in range(3)], axis=0)
    np.testing.assert_allclose(scores["duplicate"], want, rtol=1e-6)
    np.testing.assert_allclose(scores["prefix_matching"], hd.prefix_matching_score(w, half).mean(0), rtol=1e-6)
    assert "prefix_matching" not in quality.head_scores(w, tokens)


TYPED = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "induction_typed.json").read_text())["examples"]


def test_copy_accuracy_matches_a_loop_oracle():
    rng = np.random.default_rng(3)
    tokens = task.repeated_batch(4, 5, 6)
    logits = rng.normal(size=(5, 13, len(task.VOCAB)))
    targets = quality.repeat_targets(5, 6)
    hits = [logits[b, t - 1].argmax() == tokens[b, t] for b in range(5) for t in range(13) if t >= 8]
    assert targets.sum() == 5 * 5 and quality.copy_accuracy(logits, tokens, targets) == pytest.approx(np.mean(hits))
    perfect = np.zeros_like(logits)
    perfect[np.arange(5)[:, None], np.arange(12)[None, :], tokens[:, 1:]] = 1.0  # position t says token t + 1
    assert quality.copy_accuracy(perfect, tokens, targets) == 1.0


def test_every_typed_example_repeats_its_stretch_and_names_what_follows():
    assert len(TYPED) >= 30
    for example in TYPED:
        typed = quality.typed_repeat(example)
        n = len(example["repeat"].split())
        second = int(np.flatnonzero(typed.targets)[0]) - 1
        first = next(s for s in range(1, second) if np.array_equal(typed.ids[s : s + n], typed.ids[second : second + n]))
        assert typed.targets.sum() == n - 1 and first + n <= second
        if example["next"] is None:  # the text goes on after the second copy
            assert second + n < len(typed.ids)
        else:  # it ends with the second copy: next is what followed the first
            assert second + n == len(typed.ids) and typed.next_id == typed.ids[first + n]
    with pytest.raises(ValueError, match="does not appear twice"):
        quality.typed_repeat({"text": "a b c a b", "repeat": "a b c"})


def test_drop_window_and_phase_change_on_a_made_up_log():
    steps = np.arange(0, 2001, 50)
    repeated = 3.9 - 3.0 / (1 + np.exp(-(steps - 1000) / 40.0))
    start, end = quality.drop_window(steps, repeated)
    assert 850 <= start <= 950 and 1050 <= end <= 1150  # the steepest stretch of the fall around 1000
    prefix = np.zeros((len(steps), 2, 2))
    prefix[:, 1, 0] = 0.7 / (1 + np.exp(-(steps - 1000) / 40.0))
    change = quality.phase_change({"step": steps, "repeated_loss": repeated, "prefix_matching": prefix, "half": 31})
    assert change.best_head == (1, 0) and change.best_score == pytest.approx(0.7, abs=1e-3)
    assert change.drop == (start, end) and change.coincides and change.baseline == pytest.approx(1 / 63)
    assert change.repeated_before > 3.5 > 1.5 > change.repeated_after > change.repeated_final
    assert quality.drop_window(steps, np.full(len(steps), 3.9)) is None


@pytest.fixture(scope="module")
def committed():
    cfg, graphdef, params, info = load_model()
    return graphdef, params, info


def test_the_committed_model_has_an_induction_head_on_held_out_sequences(committed):
    graphdef, params, info = committed
    final = quality.measure(graphdef, params)  # seed disjoint from the training log's
    prefix = final.scores["prefix_matching"]
    baseline = 1 / (1 + 2 * quality.HALF)
    assert prefix.max() >= quality.GOAL + 0.1  # measured 0.96; the goal is 0.4, random ≈ 1/T ≈ 0.016
    layer, head = np.unravel_index(prefix.argmax(), prefix.shape)
    assert layer == 1  # it needs the previous-token head of layer 0 to compose with
    assert final.scores["previous"][0].max() >= 0.4  # that layer-0 head
    assert final.repeated_loss < 1.5 < 3.5 < final.first_half_loss  # copying works; the first copy stays random
    untrained = quality.measure(graphdef, load_model_snapshots()[0])
    assert untrained.scores["prefix_matching"].max() < 3 * baseline
    assert untrained.repeated_loss > 3.5


def test_the_head_forms_inside_the_drop_of_the_repeated_half_loss(committed):
    _, _, info = committed
    change = quality.phase_change(info["log"])
    assert change.best_score >= quality.GOAL and change.emerged_step is not None
    assert change.coincides, (change.emerged_step, change.drop)
    assert change.repeated_before - change.repeated_after > 1.5
    dense = [s for s in info["snapshot_steps"] if change.drop[0] - 200 <= s <= change.drop[1] + 200]
    assert len(dense) >= len(info["snapshot_steps"]) // 3  # the slider is dense around the drop


def test_the_log_is_what_the_final_weights_measure(committed):
    graphdef, params, info = committed
    again = quality.measure(graphdef, params, seed=quality.LOG_SEED)
    log = info["log"]
    np.testing.assert_allclose(again.scores["prefix_matching"], log["prefix_matching"][-1], atol=2e-4)
    assert again.repeated_loss == pytest.approx(log["repeated_loss"][-1], abs=1e-4)
    short = quality.short_repeat_copying(graphdef, params, info["log_short_half"], seed=quality.LOG_SEED,
                                         count=2 * quality.COUNT)
    assert short == pytest.approx(log["short_copied"][-1], abs=1e-3)


def test_short_repeats_joined_the_training_after_the_head_formed(committed):
    _, _, info = committed
    change = quality.phase_change(info["log"])
    assert info["mixture_when"] == "after-head" and info["mixture_from"] == change.emerged_step + 200
    steps, short = np.asarray(info["log"]["step"]), np.asarray(info["log"]["short_copied"])
    assert short[steps <= info["mixture_from"]].max() < 0.2  # the original task alone: short repeats not copied
    assert short[-1] >= quality.SHORT_GOAL


# Measured on the committed model (`python -m models.quality induction`, 256 held-out sequences each); the
# bars are those figures less a small margin, and never below the goal of 80 % for 4 tokens.
SHORT_COPIED = {3: 1.000, 4: 0.991, 6: 0.984, 8: 0.987}  # [BOS] + r + r
SHORT_PLACED = {3: 0.717, 4: 0.799, 6: 0.876, 8: 0.905}  # r twice among 63 uniform tokens
TYPED_COPIED, TYPED_CONTINUED = 0.989, 1.000  # 88 of 89 second-copy tokens, 38 of 38 continuations


@pytest.mark.parametrize("half", quality.SHORT_HALVES)
def test_the_committed_model_copies_short_held_out_repeats(committed, half):
    graphdef, params, _ = committed
    copied = quality.short_repeat_copying(graphdef, params, half)
    assert copied >= max(quality.SHORT_GOAL, SHORT_COPIED[half] - 0.03)
    placed = quality.short_repeat_copying(graphdef, params, half, placed=True)  # harder: chance matches around
    assert placed >= SHORT_PLACED[half] - 0.04


def test_the_committed_model_copies_hand_typed_repeats(committed):
    graphdef, params, _ = committed
    result = quality.typed_copying(graphdef, params, [quality.typed_repeat(e) for e in TYPED])
    assert result.positions > 60 and result.texts >= 30
    assert result.copied >= max(quality.SHORT_GOAL, TYPED_COPIED - 0.03), result.missed
    assert result.continued >= max(quality.SHORT_GOAL, TYPED_CONTINUED - 0.05), result.missed
    untrained = quality.typed_copying(graphdef, load_model_snapshots()[0], [quality.typed_repeat(e) for e in TYPED])
    assert untrained.copied < 0.2
