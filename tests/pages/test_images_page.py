"""AppTest for the images page: captions with per-word panels, samples converge, patch attention."""

import numpy as np

from tests.pages.conftest import chart_data, chart_specs, click_chart, open_page
from tests.pages.exports import panels_of


def heatmaps(spec):
    return [t for t in spec["data"] if t["type"] == "heatmap"]


def test_images_page_soft_and_hard_panels_and_samples_slider():
    at = open_page("pages/images.py")
    assert not at.exception
    assert at.title[0].value == "Hard vs soft attention (images)"
    specs = chart_specs(at)
    assert len(specs) == 1  # soft and hard panels in one figure; the patch tab runs only when open
    captions = [m.value for m in at.markdown if m.value.startswith("**Caption:**")]
    assert len(captions) == 2
    assert [c.rsplit(" · ", 1)[1] for c in captions] == ["*soft*", "*hard*"]  # which captioner wrote it
    words = captions[0].removeprefix("**Caption:** ").rsplit(" · ", 1)[0].split()
    hard_words = captions[1].removeprefix("**Caption:** ").rsplit(" · ", 1)[0].split()
    # One picture of every panel, then one hover map per block and map kind (soft α; hard α and
    # sample frequency), each holding a panel per word; then the word titles and the colour bars' numbers.
    spec = specs[0]
    assert [t["type"] for t in spec["data"]] == ["image", "heatmap", "heatmap", "heatmap", "scatter", "scatter"]
    assert spec["data"][0]["source"].startswith("data:image/png;base64,")
    assert list(spec["data"][4]["text"]) == words + hard_words  # the word titles
    assert panels_of(chart_data(at, 0, "z", trace=1)).shape[0] == len(words)
    headings = [a["text"] for a in spec["layout"]["annotations"] if a["text"].startswith("<b>")]
    assert headings[0].startswith("<b>Soft: “") and headings[1].startswith("<b>Hard (sampled cell outlined): “")

    n = len(hard_words)
    alpha = panels_of(chart_data(at, 0, "z", trace=2))
    freq_20 = panels_of(chart_data(at, 0, "z", trace=3))
    assert alpha.shape == freq_20.shape == (n, 8, 8)
    np.testing.assert_allclose(alpha.sum(axis=(1, 2)), 1.0, atol=1e-5)
    np.testing.assert_allclose(freq_20.sum(axis=(1, 2)), 1.0, atol=1e-6)
    at.slider(key="cap_samples").set_value(2000).run()
    assert not at.exception
    freq_2000 = panels_of(chart_data(at, 0, "z", trace=3))
    assert not np.allclose(freq_20, freq_2000)
    assert np.abs(freq_2000 - alpha).max() < np.abs(freq_20 - alpha).max()  # samples converge to α
    at.radio(key="show").set_value("hard").run()
    assert not at.exception and len(heatmaps(chart_specs(at)[0])) == 2  # the hard block alone


def test_images_page_builder_random_scene_and_patch_controls():
    at = open_page("pages/images.py")
    at.radio(key="image_source").set_value("random").run()
    at.number_input(key="scene_seed").set_value(11).run()
    assert not at.exception
    assert any(c.value.startswith("True caption:") for c in at.caption)
    captions = chart_specs(at)
    at.session_state["img_view"] = "patches"
    at.run()
    assert len(chart_specs(at)) == 1, "only the open tab runs"
    assert chart_specs(at)[0] != captions[0]
    before = chart_data(at, 0, "z", trace=1)
    at.number_input(key="patch_row").set_value(0).run()
    at.number_input(key="patch_col").set_value(0).run()
    at.slider(key="patch_temperature").set_value(0.05).run()
    after = chart_data(at, 0, "z", trace=1)
    assert not at.exception and after.shape == before.shape
    np.testing.assert_allclose(after.sum(), 1.0, atol=1e-5)
    assert at.slider(key="patch_samples").disabled and at.number_input(key="patch_seed").disabled  # soft: greyed out
    at.radio(key="patch_mode").set_value("argmax").run()
    assert sorted(set(chart_data(at, 0, "z", trace=1).ravel().tolist())) == [0.0, 1.0]
    at.radio(key="patch_mode").set_value("sample").run()
    assert not at.slider(key="patch_samples").disabled and not at.number_input(key="patch_seed").disabled


def test_images_page_overlapping_build_is_a_one_line_error():
    at = open_page("pages/images.py")
    at.radio(key="build_count").set_value(2).run()
    at.slider(key="build_x_1").set_value(10).run()
    at.slider(key="build_y_1").set_value(20).run()
    assert not at.exception
    assert at.error and "overlap" in at.error[0].value


def test_images_page_position_sliders_keep_their_range_and_the_object_inside():
    # x and y keep one range for every size (a changed range would remount both sliders in the
    # browser); a position a larger object no longer fits moves inside, and the slider says so.
    at = open_page("pages/images.py")
    picture = chart_specs(at)[0]["data"][0]["source"]
    at.slider(key="build_x_0").set_value(46).run()  # size 18: the right edge
    assert not at.exception and not at.error
    assert at.slider(key="build_x_0").value == 46 and at.slider(key="build_x_0").max == 52
    at.slider(key="build_size_0").set_value(24).run()
    assert not at.exception and not at.error
    assert at.slider(key="build_x_0").value == 40 and at.slider(key="build_x_0").max == 52
    at.slider(key="build_y_0").set_value(52).run()  # past the edge for 24 px: its callback moves it
    assert not at.exception and not at.error
    assert at.slider(key="build_y_0").value == 40
    assert chart_specs(at)[0]["data"][0]["source"] != picture
    at.slider(key="build_size_0").set_value(12).run()  # smaller: positions stay where they were
    assert (at.slider(key="build_x_0").value, at.slider(key="build_y_0").value) == (40, 40)


def test_a_click_on_a_patch_moves_the_query_and_a_scripted_one_gets_one_line():
    at = open_page("pages/images.py")
    at.session_state["img_view"] = "patches"
    at.run()
    rows, cols = at.number_input(key="patch_row"), at.number_input(key="patch_col")
    grid_w = cols.max + 1
    start = (rows.value, cols.value)
    for bad in ("abc", [1, 2], float("inf"), float("nan"), -5, 10**9, 2.5, True):
        click_chart(at, "patch_chart", [{"curve_number": 2, "point_index": 0, "customdata": bad}])
        assert not at.exception, (bad, at.exception)
        assert (at.number_input(key="patch_row").value, at.number_input(key="patch_col").value) == start, bad
        assert any("named no patch" in c.value for c in at.caption), bad
    click_chart(at, "patch_chart", [{"curve_number": 2, "point_index": 0, "customdata": grid_w + 2}])
    assert not at.exception
    assert (at.number_input(key="patch_row").value, at.number_input(key="patch_col").value) == (1, 2)
    assert not any("named no patch" in c.value for c in at.caption)
