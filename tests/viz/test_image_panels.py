"""Caption panels: one panel per word and map kind, wrapped into lines of a few words, painted into
one picture with an invisible hover map per map kind over it."""

import base64
import io

import numpy as np
import plotly.colors
import pytest
from PIL import Image

from tests.pages.exports import panels_of
from viz.images import (
    BAR_GAP,
    BAR_WIDTH,
    FRAME,
    OUTLINE,
    CaptionBlock,
    caption_blocks,
    panel_pitch,
)
from viz.pixel_scale import colour_map, overlay_pixels, scale_ticks


def _inputs(n_words, grid=8):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (64, 64, 3)).astype(np.uint8)
    maps = rng.dirichlet(np.ones(grid * grid), size=n_words).reshape(n_words, grid, grid)
    return image, [f"w{i}" for i in range(n_words)], maps.astype(np.float32)


def picture(fig) -> np.ndarray:
    """Returns the figure's one image trace as RGBA pixels [H, W, 4], placed at data (0, 0)."""
    image = fig.data[0]
    assert image.type == "image" and (image.x0, image.y0) == (0, 0)
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(image.source.split(",", 1)[1]))).convert("RGBA"))


def panel_origin(k: int, r: int, *, per_line: int, n_rows: int, top: int = 0) -> tuple[int, int]:
    """Returns word k's panel of map kind r: its top-left pixel (x, y)."""
    pitch_x, pitch_y = panel_pitch((64, 64))
    line, col = divmod(k, per_line)
    return col * pitch_x, top + (line * n_rows + r) * pitch_y


def test_colour_map_is_plotlys_colour_scale():
    # Oracle: plotly's own Python interpolation of the same scale.
    values = np.array([0.0, 0.07, 0.25, 0.5, 0.61, 0.9, 1.0, 1.4, -0.2])
    expected = np.array([plotly.colors.unlabel_rgb(c) for c in
                         plotly.colors.sample_colorscale("Viridis", list(np.clip(values, 0, 1)))], np.float64)
    np.testing.assert_allclose(colour_map(values * 2.0, 2.0, "Viridis"), expected, atol=0.51)


def test_overlay_pixels_blend_the_map_over_the_image():
    image, _, maps = _inputs(1)
    cells = overlay_pixels(image, maps[0], cmax=float(maps.max()), opacity=0.6, smooth=False)
    # Numpy oracle: each 8 × 8 pixel cell is the image and the colour of its value mixed with the
    # colour's share 0.6 × √(value / largest value): a cell of weight 0 is the image itself, no wash.
    cell_of = np.repeat(np.repeat(maps[0], 8, axis=0), 8, axis=1)
    share = (0.6 * np.sqrt(cell_of / maps.max()))[..., None]
    expected = (1 - share) * image + share * colour_map(cell_of, float(maps.max()))
    np.testing.assert_allclose(cells, np.rint(expected), atol=1)
    zero = np.zeros((8, 8), np.float32)
    zero[0, 0] = 1.0
    clear = overlay_pixels(image, zero, cmax=1.0, opacity=0.6, smooth=False)
    np.testing.assert_array_equal(clear[8:, 8:], image[8:, 8:])  # weight 0: the picture as it is
    flat = np.full((8, 8), 0.3, np.float32)  # a constant map interpolates to itself
    np.testing.assert_array_equal(overlay_pixels(image, flat, cmax=0.3, opacity=1.0, smooth=True),
                                  np.broadcast_to(np.rint(colour_map(np.float32(0.3), 0.3)).astype(np.uint8), (64, 64, 3)))
    smooth = overlay_pixels(np.zeros_like(image), maps[0], cmax=float(maps.max()), opacity=1.0, smooth=True)
    assert len(np.unique(smooth.reshape(-1, 3), axis=0)) > 64  # interpolated: more colours than cells


def test_words_wrap_into_lines_and_each_line_holds_every_map_kind():
    image, words, maps = _inputs(6)
    fig = caption_blocks(image, [CaptionBlock(words, [("α", maps), ("frequency", maps * 2)], smooth=[True, False])],
                         per_line=4)
    assert [t.type for t in fig.data] == ["image", "heatmap", "heatmap", "scatter", "scatter"]
    alpha, freq = fig.data[1], fig.data[2]
    np.testing.assert_allclose(panels_of(alpha.z), maps)  # one panel per word, row-major over the lines
    np.testing.assert_allclose(panels_of(freq.z), maps * 2)
    assert alpha.opacity == 0 and alpha.hoverongaps is False and "w5" in np.asarray(alpha.text).ravel().tolist()
    cmax = float(maps.max() * 2)
    assert fig.layout.coloraxis.cmax == pytest.approx(cmax)
    pixels = picture(fig)
    for k in range(6):  # word 5 sits on the second line, second column, α above frequency
        for r, (row_maps, smooth) in enumerate(((maps, True), (maps * 2, False))):
            x, y = panel_origin(k, r, per_line=4, n_rows=2)
            expected = overlay_pixels(image, row_maps[k], cmax=cmax, opacity=0.85, smooth=smooth)
            np.testing.assert_array_equal(pixels[y + 1:y + 63, x + 1:x + 63, :3], expected[1:-1, 1:-1])
            edge = np.ones((64, 64), bool)
            edge[1:-1, 1:-1] = False
            assert np.all(pixels[y:y + 64, x:x + 64, :3][edge] == FRAME)  # each panel framed in grey
            assert np.all(pixels[y:y + 64, x:x + 64, 3] == 255)
    x5, y5 = panel_origin(5, 0, per_line=4, n_rows=2)
    pitch_x, pitch_y = panel_pitch((64, 64))
    assert (x5, y5) == (pitch_x, 2 * pitch_y)
    assert np.all(pixels[y5:y5 + 64, x5 + 64:x5 + 72, 3] == 0)  # the gap between panels is transparent
    # The hover map's cell (3, 4) of word 5 lies over that cell's pixels.
    gh_row, gw_col = y5 // 8 + 3, x5 // 8 + 4
    assert alpha.x0 + gw_col * alpha.dx == pytest.approx(x5 + 4 * 8 + 3.5)
    assert alpha.y0 + gh_row * alpha.dy == pytest.approx(y5 + 3 * 8 + 3.5)
    assert alpha.z[gh_row][gw_col] == pytest.approx(maps[5, 3, 4])
    assert list(alpha.customdata[gh_row][gw_col]) == [3, 4] and alpha.text[gh_row][gw_col] == "w5"
    titles = fig.data[3]
    assert list(titles.text) == words and titles.mode == "text"
    assert titles.y[5] < y5 and x5 < titles.x[5] < x5 + 64  # word 5's title above its panel
    rows = [a.text for a in fig.layout.annotations]
    assert rows.count("α") == 2 and rows.count("frequency") == 2  # row titles repeat per line


def test_a_short_caption_takes_one_line_and_bad_arguments_are_refused():
    image, words, maps = _inputs(3)
    fig = caption_blocks(image, [CaptionBlock(words, [("α", maps)])], per_line=4)
    pitch_x, _ = panel_pitch((64, 64))
    bar = int(64 * BAR_GAP) + int(64 * BAR_WIDTH)
    assert picture(fig).shape[:2] == (64, 3 * pitch_x - 8 + bar)  # one line of three panels, and the colour bar
    assert np.asarray(fig.data[1].z).shape == (8, 3 * 9 - 1)
    with pytest.raises(ValueError, match="per_line"):
        caption_blocks(image, [CaptionBlock(words, [("α", maps)])], per_line=0)
    with pytest.raises(ValueError, match="maps must be"):
        caption_blocks(image, [CaptionBlock(words, [("α", maps[:2])])], per_line=4)
    with pytest.raises(ValueError, match="at least one word"):
        caption_blocks(image, [CaptionBlock([], [("α", maps[:0])])])
    _, _, odd = _inputs(3, grid=5)  # 64 px are not a whole number of 5 cells
    with pytest.raises(ValueError, match="does not tile"):
        caption_blocks(image, [CaptionBlock(words, [("α", odd)])])


def test_caption_blocks_stack_each_caption_with_its_own_words_heading_and_colour_scale():
    image, words, maps = _inputs(3)
    soft = CaptionBlock(words, [("α (soft)", maps * 0.5)], heading="Soft: a b c")
    hard = CaptionBlock(words[:2], [("α", maps[:2]), ("frequency", maps[:2])], heading="Hard <x>",
                        marks=[np.array([0, 63]), None])
    fig = caption_blocks(image, [soft, hard], per_line=4)
    assert [t.type for t in fig.data] == ["image", "heatmap", "heatmap", "heatmap", "scatter", "scatter"]
    assert [t.coloraxis for t in fig.data[1:4]] == ["coloraxis", "coloraxis2", "coloraxis2"]
    assert fig.layout.coloraxis.cmax == pytest.approx(float(maps.max() * 0.5))  # each block its own scale
    assert fig.layout.coloraxis2.cmax == pytest.approx(float(maps[:2].max()))
    numbers = fig.data[5]
    zeros = [y for y, t in zip(numbers.y, numbers.text) if t == "0"]
    assert len(zeros) == 2 and zeros[0] < fig.data[2].y0 < zeros[1]  # each bar beside its own block, soft above
    # The hard block lies wholly under the soft one (and its heading), its rows in order.
    soft_bottom = fig.data[1].y0 + len(fig.data[1].z) * fig.data[1].dy
    assert fig.data[2].y0 > soft_bottom and fig.data[3].y0 > fig.data[2].y0
    assert list(fig.data[4].text) == words + words[:2]
    headings = [a.text for a in fig.layout.annotations if a.text.startswith("<b>")]
    assert headings == ["<b>Soft: a b c</b>", "<b>Hard &lt;x&gt;</b>"]  # escaped
    # The hard block's outlines are painted: cell 0 of word 0 and cell 63 (row 7, col 7) of word 1.
    pixels = picture(fig)
    top = int(fig.data[2].y0 - fig.data[2].dy / 2 + 0.5)
    for k, (row, col) in ((0, (0, 0)), (1, (7, 7))):
        x, y = panel_origin(k, 0, per_line=4, n_rows=2, top=top)
        cell = pixels[y + row * 8:y + row * 8 + 8, x + col * 8:x + col * 8 + 8, :3]
        frame = np.ones((8, 8), bool)
        frame[1:-1, 1:-1] = False
        assert np.all(cell[frame] == OUTLINE) and not np.any(np.all(cell[~frame] == OUTLINE, axis=-1))
    x, y = panel_origin(0, 1, per_line=4, n_rows=2, top=top)  # the frequency row has none
    assert not np.any(np.all(pixels[y:y + 64, x:x + 64, :3] == OUTLINE, axis=-1))
    with pytest.raises(ValueError, match="at least one block"):
        caption_blocks(image, [])


def test_each_block_has_a_colour_bar_painted_beside_it_in_plotlys_colours():
    image, words, maps = _inputs(3)
    soft = CaptionBlock(words, [("α (soft)", maps * 0.5)], heading="Soft")
    hard = CaptionBlock(words, [("α", maps), ("frequency", maps)], heading="Hard")
    fig = caption_blocks(image, [soft, hard], per_line=4)
    assert fig.layout.coloraxis.showscale is False and fig.layout.coloraxis2.showscale is False  # no plotly.js bars
    pixels, numbers = picture(fig), fig.data[5]
    left = 3 * panel_pitch((64, 64))[0] - 8 + int(64 * BAR_GAP)
    column = pixels[:, left + 2]
    painted = np.flatnonzero(column[:, 3] == 255)
    runs = np.split(painted, np.flatnonzero(np.diff(painted) > 1) + 1)
    assert len(runs) == 2 and len(runs[0]) == 64 and len(runs[1]) == 64 + panel_pitch((64, 64))[1]  # one bar a block
    for run, peak in zip(runs, (float(maps.max() * 0.5), float(maps.max()))):
        np.testing.assert_allclose(column[run[0], :3], colour_map(peak, peak), atol=0.51)  # the top: the block's peak
        np.testing.assert_allclose(column[run[-1], :3], colour_map(0.0, peak), atol=0.51)  # the bottom: 0
        values = column[run, :3].astype(float)
        np.testing.assert_allclose(values, colour_map(np.linspace(peak, 0, len(run)), peak), atol=0.51)  # row by row
        # each number sits at its value's row of the bar, right of it
        ticks = scale_ticks(peak)
        shown = [(y, t) for x, y, t in zip(numbers.x, numbers.y, numbers.text) if run[0] - 1 <= y <= run[-1] + 1]
        assert [t for _, t in shown] == [label for _, label in ticks]
        for (y, _), (value, _) in zip(shown, ticks):
            assert y == pytest.approx(run[0] + (len(run) - 1) * (1 - value / peak))
    assert list(numbers.text).count("weight") == 2 and all(x > left for x in numbers.x)


def test_scale_ticks_step_like_plotly_and_stay_under_the_peak():
    assert scale_ticks(1.0) == [(0.0, "0"), (0.25, "0.25"), (0.5, "0.5"), (0.75, "0.75"), (1.0, "1")]
    assert scale_ticks(0.5678) == [(0.0, "0"), (0.2, "0.2"), (0.4, "0.4")]
    assert scale_ticks(12.0) == [(0.0, "0"), (5.0, "5"), (10.0, "10")]
    assert scale_ticks(0.0) == [(0.0, "0")] and scale_ticks(float("nan")) == [(0.0, "0")]
    for peak in np.geomspace(1e-4, 1e3, 57):
        ticks = scale_ticks(float(peak))
        values = [v for v, _ in ticks]
        assert 2 <= len(ticks) <= 5 and values[0] == 0 and values[-1] <= peak * (1 + 1e-9)
        assert values[-1] >= peak / 2.5  # the top tick is never far below the peak
        assert np.allclose(np.diff(values), values[1]) and [float(t) for _, t in ticks] == pytest.approx(values)


def test_panels_are_at_least_200_px_in_the_pages_column_at_desk_width():
    # The page's column is 624 px wide on a 1,280 px window: x and y keep one scale, the smaller
    # of what the width and the height allow, so an image's side is 64 units at that scale.
    image, words, maps = _inputs(5)
    for blocks in ([CaptionBlock(words, [("α", maps)])],
                   [CaptionBlock(words, [("α", maps)], heading="Soft"),
                    CaptionBlock(words, [("α", maps), ("frequency", maps)], heading="Hard")]):
        layout = caption_blocks(image, blocks).layout
        (x0, x1), (y0, y1) = layout.xaxis.range, layout.yaxis.range
        width = 624 - layout.margin.l - layout.margin.r
        height = layout.height - layout.margin.t - layout.margin.b
        scale = min(width / abs(x1 - x0), height / abs(y1 - y0))
        assert 200 <= 64 * scale <= 215, 64 * scale
