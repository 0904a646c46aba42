"""AppTest helpers: run a page through app.py (so navigation is real) and read its figures."""

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
# The app shows users no error details (.streamlit/config.toml); AppTest runs here show them,
# so a failing page test says what failed.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
from streamlit import config as _config  # noqa: E402

_config.set_option("client.showErrorDetails", "full")
APP = str(ROOT / "app.py")


def open_page(page_file: str, timeout: float = 120) -> AppTest:
    """Returns an AppTest that has run app.py and switched to `page_file` (e.g. pages/x.py)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    if page_file != "pages/home.py":
        at.switch_page(page_file)
        at.run()
    return at


def opened_page(page_file: str, timeout: float = 120):
    """Returns a module-scoped fixture: one AppTest session on `page_file` (open_page), opened without an
    exception and shared by the module's tests (a model loads and compiles once per process)."""
    @pytest.fixture(scope="module")
    def at() -> AppTest:
        app = open_page(page_file, timeout=timeout)
        assert not app.exception, app.exception
        return app

    return at


def markdown_text(at: AppTest) -> str:
    """Returns the page's markdown elements' texts, one a line."""
    return "\n".join(m.value for m in at.markdown)


def decode(value):
    """Returns numpy for plotly's {"dtype", "bdata", "shape"} arrays; other values unchanged."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if isinstance(shape, str):
            shape = [int(x) for x in shape.split(",")]
        return data.reshape(shape) if shape else data
    return value


def chart_specs(at: AppTest) -> list[dict]:
    """Returns every plotly chart's figure JSON on the page."""
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def chart_data(at: AppTest, index: int, field: str = "z", trace: int = 0) -> np.ndarray:
    """Returns one trace field of one chart as a numpy array."""
    return np.asarray(decode(chart_specs(at)[index]["data"][trace][field]), dtype=float)


def send_widget_value(at: AppTest, key: str, text: str, *, kind: str = "dataframe") -> AppTest:
    """Reruns the page with the widget keyed `key` (of element kind `kind`) given `text` as its
    value, as a (scripted) browser may send it: raw JSON, not checked by any widget."""
    widget = next(e for e in at.get(kind) if e.proto.id.endswith(f"-{key}"))
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = widget.proto.id
    state.string_value = text
    return at._run(states)


def click_chart(at: AppTest, key: str, points: list[dict]) -> AppTest:
    """Reruns the page as a browser does after a click on the chart keyed `key` (st.plotly_chart
    with on_select): its selection state, here any JSON a scripted client may send, goes with the
    rerun as the chart's widget value."""
    selection = {"selection": {"points": points, "point_indices": [], "box": [], "lasso": []}}
    return send_widget_value(at, key, json.dumps(selection), kind="plotly_chart")


@pytest.fixture
def page():
    return open_page


@pytest.fixture
def served_downloads(monkeypatch):
    """Returns bytes_of(at, label): the bytes a download button of the last AppTest run serves.

    AppTest keeps download data in an in-memory media store of its mock runtime; this fixture
    keeps a handle on each store so a test can read back exactly what a click would download.
    """
    import streamlit.testing.v1.app_test as app_test
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    stores = []

    class Recording(MemoryMediaFileStorage):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            stores.append(self)

    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", Recording)

    def bytes_of(at: AppTest, label: str) -> bytes:
        buttons = [b for b in at.get("download_button") if b.proto.label == label]
        assert buttons, f"no download button {label!r}"
        filename = buttons[0].proto.url.rsplit("/", 1)[-1]
        return bytes(stores[-1].get_file(filename).content)

    return bytes_of


@pytest.fixture(autouse=True)
def readable_figures(monkeypatch):
    """Every figure any page test renders is checked for readability after each run: text ≥ 13 px
    and contrast ≥ 4.5:1 (tests/viz/readability.py), so a page's default figure and every state the
    tests drive it into are covered."""
    from tests.viz.readability import problems

    run = AppTest.run

    def checked_run(self, *args, **kwargs):
        at = run(self, *args, **kwargs)
        found = {i: p for i, spec in enumerate(chart_specs(at)) if (p := problems(spec))}
        assert not found, f"figures hard to read (chart index: problems): {found}"
        return at

    monkeypatch.setattr(AppTest, "run", checked_run)
