"""Picking a view reruns only the views: the seq2seq and images pages' View switches sit in a fragment of
their own, so the controls and the main map above them (seq2seq), or the image source column (images),
are not sent again. The Playground's controls rerun a fragment that leaves out its key/value editor. Read from the websocket: every message the server sends is a ForwardMsg, and each
element it (re)draws is one delta."""

import json
from urllib.parse import parse_qs, quote, urlparse

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.e2e.conftest import open_page, wait_for_charts, wait_idle

pytestmark = pytest.mark.e2e


def _listen(listen) -> list[bytes]:
    """Returns the list the page's binary websocket frames from the server are appended to."""
    frames: list[bytes] = []
    listen("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)
                                         if isinstance(payload, bytes) else None))
    return frames


def _elements(frames: list[bytes]) -> list[tuple[str, str]]:
    """Returns (element type, its label, body, figure spec or image captions) of every element the frames draw."""
    out = []
    for frame in frames:
        msg = ForwardMsg.FromString(frame)
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        inner = getattr(element, kind)
        text = " ".join(str(getattr(inner, name, "")) for name in ("label", "body", "spec")
                        if hasattr(inner, name))
        if kind == "imgs":
            text = " ".join(img.caption for img in inner.imgs)
        out.append((kind, text))
    return out


def _finished(frames: list[bytes]) -> bool:
    return any(ForwardMsg.FromString(frame).WhichOneof("type") == "script_finished" for frame in list(frames))


def _after(page, frames: list[bytes], action, charts: int) -> list[tuple[str, str]]:
    """Returns the elements sent for `action`'s rerun: the frames up to its script_finished message."""
    frames.clear()
    action()
    for _ in range(1200):  # up to 120 s: a first switch to a variant may load its model
        if _finished(frames):
            break
        page.wait_for_timeout(100)
    else:
        raise AssertionError("the rerun did not finish")
    wait_for_charts(page, charts, timeout=120_000)
    wait_idle(page, timeout=120_000)
    return _elements(frames)


def _sent(elements, kind: str, text: str) -> bool:
    return any(k == kind and text in t for k, t in elements)


def test_a_seq2seq_view_switch_resends_neither_the_controls_nor_the_main_map(page, listen, app_url):
    frames = _listen(listen)
    open_page(page, app_url, "seq2seq", "Seq2seq alignment", charts=3)
    view = page.locator('[data-testid="stButtonGroup"]').get_by_text("Compare two inputs", exact=True)
    switched = _after(page, frames, view.click, charts=4)
    # The new view was sent (its second date box and its three maps) …
    assert _sent(switched, "text_input", "Second date (B)")
    assert sum(kind == "plotly_chart" for kind, _ in switched) == 3
    # … and nothing above the switch: not the date box, the variant radio or the main map.
    assert not _sent(switched, "text_input", "Date to normalise")
    assert not _sent(switched, "radio", "Attention variant")
    assert not _sent(switched, "plotly_chart", "over the input")

    # A control above the switch reruns all of it, main map included: what the asserts above look for
    # is what such a rerun sends.
    radio = page.locator('[data-testid="stRadio"]').filter(has_text="Attention variant")
    above = _after(page, frames, radio.get_by_text("Luong global, dot", exact=True).click, charts=4)
    assert _sent(above, "plotly_chart", "over the input")
    assert _sent(above, "radio", "Attention variant")
    assert _sent(above, "text_input", "Second date (B)")


def test_an_images_view_switch_resends_not_the_image_source(page, listen, app_url):
    frames = _listen(listen)
    open_page(page, app_url, "images", "Hard vs soft attention", charts=1)
    view = page.locator('[data-testid="stButtonGroup"]').get_by_text("Self-attention on any photo", exact=True)
    switched = _after(page, frames, view.click, charts=1)
    assert _sent(switched, "plotly_chart", "attends to")  # the patch view's figure
    assert not _sent(switched, "imgs", "Model input")
    assert not _sent(switched, "radio", "Image")

    back = page.locator('[data-testid="stButtonGroup"]').get_by_text("Captioner: soft vs hard", exact=True)
    _after(page, frames, back.click, charts=1)
    # A scene control reruns the source column and the views: the model input is sent again.
    shape = page.locator('[data-testid="stButtonGroup"]').filter(has_text="square").get_by_text("square", exact=True)
    above = _after(page, frames, shape.click, charts=1)
    assert _sent(above, "imgs", "Model input")


def test_a_playground_control_resends_not_the_key_value_editor(page, listen, app_url):
    frames = _listen(listen)
    rows = [{"label": "near", "k1": 1.0, "k2": 0.0, "v1": 1.0, "v2": 1.0},
            {"label": "far", "k1": -1.0, "k2": 0.0, "v1": 0.0, "v2": 0.0}]
    open_page(page, app_url, f"playground?kv={quote(json.dumps(rows))}", "A Query over Key/Value pairs", charts=1)
    assert _sent(_elements(frames), "dataframe", "")  # the page's own run sends the editor
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Query q, dimension 1")
    slider.locator('input[type="range"], [role="slider"]').first.focus()
    stepped = _after(page, frames, lambda: page.keyboard.press("ArrowLeft"), charts=1)
    assert _sent(stepped, "plotly_chart", "Weights")  # the three stages were drawn again …
    assert _sent(stepped, "slider", "Query q, dimension 1")
    assert not _sent(stepped, "dataframe", "")  # … and the editor was not sent with them
    # The stages still come from the link's table, not the default one.
    assert page.evaluate("document.querySelector('.js-plotly-plot').data[0].x") == ["near", "far"]

    # An edit of the table reruns the editor and the stages, not the formulas above them.
    def edit_first_k1() -> None:
        grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
        cell = page.locator("input.gdg-input")  # the grid's cell editor, shown on a double click
        for _ in range(5):  # a double click just after a rerun is sometimes taken as two clicks
            page.mouse.dblclick(grid["x"] + grid["width"] * 0.38, grid["y"] + 35 + 17)  # row 1, column k1
            try:
                cell.wait_for(timeout=2_000)
                break
            except Exception:
                page.keyboard.press("Escape")
        cell.fill("-2")
        cell.press("Enter")

    edited = _after(page, frames, edit_first_k1, charts=1)
    assert _sent(edited, "dataframe", "") and _sent(edited, "plotly_chart", "Weights")
    assert not _sent(edited, "markdown", "| Dot-product")  # the formulas' table …
    assert not _sent(edited, "markdown", "mathtt")  # … and the hand-set matrices were not sent again
    assert json.loads(parse_qs(urlparse(page.url).query)["kv"][0])[0]["k1"] == -2
