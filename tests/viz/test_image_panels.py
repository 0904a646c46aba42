"""Caption panels: one panel per word and map kind, wrapped into lines of a few words."""

import numpy as np
import pytest

from viz.images import CaptionBlock, caption_blocks, panel_pitch


def _inputs(n_words, grid=8):
    image = np.full((64, 64, 3), 255, np.uint8)
    maps = np.random.default_rng(0).dirichlet(np.ones(grid * grid), size=n_words).reshape(n_words, grid, grid)
    return image, [f"w{i}" for i in range(n_words)], maps.astype(np.float32)


def place_of(trace, image_shape=(64, 64)) -> tuple[int, int]:
    """Returns the panel (row from the top, column from the left), 0-based, that a trace lies in."""
    pitch_x, pitch_y = panel_pitch(image_shape)
    return int(trace.y0 // pitch_y), int(trace.x0 // pitch_x)


def grid_of(fig) -> tuple[set, set]:
    """Returns the panel columns and rows that hold a trace."""
    places = [place_of(t) for t in fig.data]
    return {c for _, c in places}, {r for r, _ in places}


def test_words_wrap_into_lines_and_each_line_holds_every_map_kind():
    image, words, maps = _inputs(6)
    fig = caption_blocks(image, [CaptionBlock(words, [("α", maps), ("frequency", maps * 2)])], per_line=4)
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == 12 and len(fig.data) == 24  # (image, heatmap) per panel
    # Row-major over (map kind, word): the 6th α heatmap is word 5, on the second line's α row.
    np.testing.assert_allclose(np.asarray(heatmaps[5].z), maps[5])
    np.testing.assert_allclose(np.asarray(heatmaps[6 + 5].z), maps[5] * 2)
    columns, rows = grid_of(fig)  # 4 panel rows (2 lines × 2 map kinds) × 4 columns
    assert len(columns) == 4 and len(rows) == 4
    assert len({place_of(t) for t in heatmaps}) == 12  # no two panels overlap
    assert place_of(heatmaps[5]) == (2, 1)  # panel row 3 (line 2, α), column 2 → word 5
    assert place_of(heatmaps[6 + 5]) == (3, 1)  # the frequency row under it
    images = [t for t in fig.data if t.type == "image"]
    assert [place_of(t) for t in images] == [place_of(t) for t in heatmaps]  # each map over its image
    assert images[0].source.startswith("data:image/png;base64,")
    # Each heatmap covers exactly its image: 8 cells of 8 px from the image's first pixel.
    assert heatmaps[5].x0 - heatmaps[5].dx / 2 == pytest.approx(images[5].x0 - 0.5)
    assert heatmaps[5].y0 - heatmaps[5].dy / 2 == pytest.approx(images[5].y0 - 0.5)
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:6] == words  # word titles above each line's first map row
    assert titles.count("α") == 2 and titles.count("frequency") == 2  # row titles repeat per line
    word5 = fig.layout.annotations[5]  # above its panel, not beside it
    assert word5.yanchor == "bottom" and word5.y < images[5].y0 and images[5].x0 < word5.x < images[5].x0 + 64
    assert fig.layout.coloraxis.cmax == pytest.approx(float(maps.max() * 2))


def test_a_short_caption_takes_one_line_and_bad_arguments_are_refused():
    image, words, maps = _inputs(3)
    fig = caption_blocks(image, [CaptionBlock(words, [("α", maps)])])
    columns, rows = grid_of(fig)
    assert rows == {0} and columns == {0, 1, 2}
    with pytest.raises(ValueError, match="per_line"):
        caption_blocks(image, [CaptionBlock(words, [("α", maps)])], per_line=0)
    with pytest.raises(ValueError, match="maps must be"):
        caption_blocks(image, [CaptionBlock(words, [("α", maps[:2])])])
    with pytest.raises(ValueError, match="at least one word"):
        caption_blocks(image, [CaptionBlock([], [("α", maps[:0])])])


def test_caption_blocks_stack_each_caption_with_its_own_words_heading_and_colour_scale():
    image, words, maps = _inputs(3)
    soft = CaptionBlock(words, [("α (soft)", maps * 0.5)], heading="Soft: a b c")
    hard = CaptionBlock(words[:2], [("α", maps[:2]), ("frequency", maps[:2])], heading="Hard <x>",
                        marks=[np.array([0, 63]), None])
    fig = caption_blocks(image, [soft, hard])
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == 3 + 4 and len(fig.data) == 14
    assert {t.coloraxis for t in heatmaps[:3]} == {"coloraxis"} and {t.coloraxis for t in heatmaps[3:]} == {"coloraxis2"}
    assert fig.layout.coloraxis.cmax == pytest.approx(float(maps.max() * 0.5))  # each block its own scale
    assert fig.layout.coloraxis2.cmax == pytest.approx(float(maps[:2].max()))
    assert fig.layout.coloraxis.colorbar.y > fig.layout.coloraxis2.colorbar.y  # each bar beside its block
    # The hard block lies wholly under the soft one, its rows in order.
    assert min(t.y0 for t in fig.data[6:] if t.type == "image") > max(t.y0 for t in fig.data[:6] if t.type == "image")
    assert place_of(heatmaps[3])[1] == 0 and place_of(heatmaps[5])[0] == place_of(heatmaps[3])[0] + 1
    headings = [a.text for a in fig.layout.annotations if a.text.startswith("<b>")]
    assert headings == ["<b>Soft: a b c</b>", "<b>Hard &lt;x&gt;</b>"]  # escaped
    assert len(fig.layout.shapes) == 2  # the hard block's two outlines
    with pytest.raises(ValueError, match="at least one block"):
        caption_blocks(image, [])
