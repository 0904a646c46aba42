"""bench/mount_app.py (what bench/mount_cost.py times) draws, on view B, the element each row names."""

import json
import sys

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
from mount_cost import ELEMENTS  # noqa: E402

CHARTS = {"chart": 1, "figure": 1, "two_figures": 2, "two_panels": 1}  # on view B, besides the page's own


@pytest.mark.parametrize("element", list(ELEMENTS))
def test_view_b_draws_the_element(element, monkeypatch):
    monkeypatch.setenv("MOUNT_ELEMENT", element)
    at = AppTest.from_file(str(ROOT / "bench" / "mount_app.py"), default_timeout=60).run()
    on_a = len(at.get("plotly_chart"))
    at.session_state["mount_view"] = "B"
    at.run()
    assert not at.exception
    charts = at.get("plotly_chart")
    assert on_a == 1 and len(charts) == 1 + CHARTS.get(element, 0)
    if element == "two_panels":
        assert [t["type"] for t in json.loads(charts[1].proto.spec)["data"]] == ["heatmap", "heatmap"]
    if element == "radio":
        assert at.radio(key="mount_radio").value == "Rollout"
    if element == "caption":
        assert at.caption[-1].value == "View B"
