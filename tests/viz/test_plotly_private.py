"""What viz/plotly_private.py relies on in plotly.py: fails loudly when an upgrade changes it."""

import json
import re
from pathlib import Path

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from viz.plotly_private import layout_of, traces_of, unchecked_figure

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def test_plotly_is_the_pinned_version():
    # The private names below were read in this version; an upgrade is checked by this file again.
    pinned = re.search(r"^plotly==(\S+)", REQUIREMENTS.read_text(), re.M).group(1)
    assert plotly.__version__ == pinned


def test_an_unchecked_figure_skips_validation():
    layout = {"margin": {"l": "wide"}}
    with pytest.raises(ValueError):  # validation, which unchecked_figure skips
        go.Figure({"data": [], "layout": layout})
    fig = unchecked_figure({"data": [{"type": "bar", "y": [1, 2]}], "layout": layout})
    assert layout_of(fig)["margin"] == {"l": "wide"} and traces_of(fig)[0]["y"] == [1, 2]
    assert json.loads(pio.to_json(fig, validate=False))["layout"]["margin"] == {"l": "wide"}  # as the app sends it


def test_the_plain_dicts_are_the_ones_the_figure_reads_and_writes():
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]]), layout={"margin": {"l": 5}})
    assert isinstance(layout_of(fig), dict) and isinstance(traces_of(fig), list)
    layout_of(fig)["margin"]["r"] = 17
    traces_of(fig)[0]["zmax"] = 9
    assert fig.layout.margin.r == 17 and fig.data[0].zmax == 9
    assert fig.to_plotly_json()["layout"]["margin"] == {"l": 5, "r": 17}
    fig.update_layout(margin={"t": 2}, xaxis={"ticklabeloverflow": "allow"})
    fig.data[0].colorbar.ticklabeloverflow = "allow"
    assert layout_of(fig)["margin"]["t"] == 2 and layout_of(fig)["xaxis"] == {"ticklabeloverflow": "allow"}
    assert traces_of(fig)[0]["colorbar"] == {"ticklabeloverflow": "allow"}
