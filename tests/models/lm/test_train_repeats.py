"""The training windows that repeat a passage of their own text (models/lm/task.py repeat_spans): one
passage of lo..hi tokens copied to a random later place, the rest of the row untouched, against a loop oracle."""

from __future__ import annotations

import numpy as np

from models.lm import task


def _copied_passage(original: np.ndarray, row: np.ndarray) -> tuple[int, int, int] | None:
    # Loop oracle: the (a, b, n) such that row equals original with original[a : a + n] written at b.
    width = len(row)
    changed = np.flatnonzero(row != original)
    if not len(changed):
        return None
    for n in range(1, width // 2 + 1):
        for b in range(width - n + 1):
            if not (b <= changed[0] and changed[-1] < b + n):
                continue
            for a in range(0, b - n + 1):
                want = original.copy()
                want[b : b + n] = original[a : a + n]
                if (want == row).all():
                    return a, b, n
    return None


def test_repeated_rows_copy_one_passage_to_a_later_place():
    rng = np.random.default_rng(0)
    body = np.arange(1000, 1000 + 6 * 40, dtype=np.int32).reshape(6, 40)  # distinct tokens: every change shows
    out = task.repeat_spans(rng, body, rows=4, lo=5, hi=12)
    np.testing.assert_array_equal(out[4:], body[4:])  # rows past `rows` keep their text
    assert not np.shares_memory(out, body) and (body == np.arange(1000, 1240).reshape(6, 40)).all()
    for r in range(4):
        found = _copied_passage(body[r], out[r])
        assert found is not None, out[r]
        a, b, n = found
        assert 5 <= n <= 12 and a + n <= b and b + n <= 40
        np.testing.assert_array_equal(out[r, b : b + n], body[r, a : a + n])


def test_lengths_and_places_vary_and_follow_the_seed():
    body = np.arange(10_000, 10_000 + 200 * 64, dtype=np.int32).reshape(200, 64)
    out = task.repeat_spans(np.random.default_rng(1), body, rows=200, lo=4, hi=40)
    again = task.repeat_spans(np.random.default_rng(1), body, rows=200, lo=4, hi=40)
    np.testing.assert_array_equal(out, again)
    lengths = [(out[r] != body[r]).sum() for r in range(200)]  # distinct tokens: every copied token differs
    offsets = [int(np.flatnonzero(out[r] != body[r])[0]) for r in range(200)]
    assert min(lengths) >= 4 and max(lengths) <= 32 and len(set(lengths)) > 15  # hi capped at half the width
    assert len(set(offsets)) > 20  # no fixed place a positional head could learn


def test_sample_windows_with_a_span_keep_bos_and_the_stream():
    rng = np.random.default_rng(2)
    stream = np.arange(100, 400, dtype=np.int32)
    windows = task.sample_windows(rng, stream, 8, 33, bos=0, repeated=3, span=(4, 8))
    assert windows.shape == (8, 33) and (windows[:, 0] == 0).all()
    assert (np.diff(windows[3:, 1:], axis=1) == 1).all()  # plain rows: consecutive stream tokens
    for row in windows[:3, 1:]:
        breaks = np.flatnonzero(np.diff(row) != 1)
        assert 1 <= len(breaks) <= 2  # one pasted passage: a jump back into the row's own text (and out of it)
        assert set(row.tolist()) < set(range(row[0], row[0] + 32))


def test_the_entry_point_takes_a_span_and_logs_it_in_its_command():
    import argparse

    from models.lm import train

    parser = argparse.ArgumentParser()
    train.add_arguments(parser)
    args = parser.parse_args(["--repeat-share", "0.75", "--repeat-span", "10", "60"])
    assert args.repeat_span == [10, 60]
    assert "--repeat-span 10 60" in train._flags(args) and "--repeat-share 0.75" in train._flags(args)
    assert parser.parse_args([]).repeat_span is None  # the window's first half written twice


def test_the_log_says_the_repeats_are_real_text():
    from models.lm import quality

    # Two runs (docs/models/lm.md): 6 of 8 windows repeated a passage, then every window, from the first's weights.
    info = quality.load_log()
    for repeat, share in ((info["earlier"]["repeat"], 0.75), (info["repeat"], 1.0)):
        assert repeat["share"] == share and repeat["span"] == [10, 60] and repeat["text"].startswith("real text")
    assert info["earlier"]["steps"] == 6000 and info["steps"] == 22000 and "--init-from" in info["command"]
