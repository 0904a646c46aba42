"""Caption panels: one panel per word and map kind, wrapped into lines of a few words."""

import numpy as np
import pytest

from viz.images import caption_panels


def _inputs(n_words, grid=8):
    image = np.full((64, 64, 3), 255, np.uint8)
    maps = np.random.default_rng(0).dirichlet(np.ones(grid * grid), size=n_words).reshape(n_words, grid, grid)
    return image, [f"w{i}" for i in range(n_words)], maps.astype(np.float32)


def _axis(fig, name: str):
    return fig.layout[name.replace("x", "xaxis", 1) if name.startswith("x") else name.replace("y", "yaxis", 1)]


def grid_of(fig) -> tuple[list, list]:
    """Returns the distinct x domains (left to right) and y domains (top to bottom) of the subplots."""
    xs = sorted({tuple(_axis(fig, t.xaxis).domain) for t in fig.data})
    ys = sorted({tuple(_axis(fig, t.yaxis).domain) for t in fig.data}, reverse=True)
    return xs, ys


def place_of(fig, trace) -> tuple[int, int]:
    """Returns a trace's subplot (row from the top, column from the left), 0-based."""
    xs, ys = grid_of(fig)
    return ys.index(tuple(_axis(fig, trace.yaxis).domain)), xs.index(tuple(_axis(fig, trace.xaxis).domain))


def test_words_wrap_into_lines_and_each_line_holds_every_map_kind():
    image, words, maps = _inputs(6)
    fig = caption_panels(image, words, [("α", maps), ("frequency", maps * 2)], per_line=4)
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == 12 and len(fig.data) == 24  # (image, heatmap) per panel
    # Row-major over (map kind, word): the 6th α heatmap is word 5, on the second line's α row.
    np.testing.assert_allclose(np.asarray(heatmaps[5].z), maps[5])
    np.testing.assert_allclose(np.asarray(heatmaps[6 + 5].z), maps[5] * 2)
    columns, rows = grid_of(fig)  # 4 subplot rows (2 lines × 2 map kinds) × 4 columns
    assert len(columns) == 4 and len(rows) == 4
    assert len({t.xaxis for t in heatmaps}) == 12  # no two panels share axes
    assert place_of(fig, heatmaps[5]) == (2, 1)  # subplot row 3 (line 2, α), column 2 → word 5
    assert place_of(fig, heatmaps[6 + 5]) == (3, 1)  # the frequency row under it
    images = [t for t in fig.data if t.type == "image"]
    assert [place_of(fig, t) for t in images] == [place_of(fig, t) for t in heatmaps]  # each map over its image
    assert images[0].source.startswith("data:image/png;base64,")
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:6] == words  # word titles above each line's first map row
    assert titles.count("α") == 2 and titles.count("frequency") == 2  # row titles repeat per line
    assert fig.layout.coloraxis.cmax == pytest.approx(float(maps.max() * 2))


def test_a_short_caption_takes_one_line_and_bad_arguments_are_refused():
    image, words, maps = _inputs(3)
    fig = caption_panels(image, words, [("α", maps)])
    columns, rows = grid_of(fig)
    assert len(rows) == 1 and len(columns) == 3
    with pytest.raises(ValueError, match="per_line"):
        caption_panels(image, words, [("α", maps)], per_line=0)
    with pytest.raises(ValueError, match="maps must be"):
        caption_panels(image, words, [("α", maps[:2])])
    with pytest.raises(ValueError, match="at least one word"):
        caption_panels(image, [], [("α", maps[:0])])
