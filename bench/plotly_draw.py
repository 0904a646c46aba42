"""How long plotly.js takes to draw the app's own figures in Chromium, against a 64 × 64 heatmap.

    .venv/bin/python bench/plotly_draw.py [--root CHECKOUT] [--repeat 30] [--json FILE]

Builds figures with the project's own builders (from --root, default this checkout, so that an
older commit's figures can be measured by the same script), as the app shows them (the axis
settings of ui.widgets.show_panels, where the checkout has them), then draws each into a fresh
<div> with Plotly.newPlot in headless Chromium, --repeat times, round-robin over the figures so
that drift of the machine's load falls on all alike. It prints the median time from the call to
the promise it returns and its ratio to the floor: bench/floor_app.py's one 64 × 64 heatmap.
This is the browser's share of a control's round trip for one changed figure, without
Streamlit's own (bench/ui_latency.py measures the whole round trip). The plotly.js is the one
plotly.py ships, which may differ in version from Streamlit's. It never asserts a time.

A second table is what a control pays when a figure is already drawn: Plotly.react from one figure
to another (the images page's caption panels, one object ↔ two objects, and one object again; the
Playground's four panels as its query slider moves them; the floor's heatmap again), from the call to
the promise, with fresh arrays each time as a new message brings them.

A third table is what a chart costs when Streamlit's component mounts it: a first Plotly.react, then
the react its theme pass makes (the same figure through JSON and back: new objects, same values).
Each figure is measured twice: with a template, as st.plotly_chart's default theme sends it, and with
the look written into its layout and a data revision (viz/chart_style.py of this checkout, as the app
sends it). A template is compared by identity, so a new one is a full redraw.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def figures(root: Path) -> dict[str, str]:
    """Returns name → figure JSON, built by the checkout at `root`."""
    sys.path.insert(0, str(root))
    os.chdir(root)
    import numpy as np
    import plotly
    import plotly.graph_objects as go

    from models.captioner.task import SceneObject, build_scene, render_clean
    from models.induction.records import snapshot_steps, training_record
    from models.registry import IMAGES, INDUCTION, get_mechanism, mechanisms_on_page
    from viz import images, plotly_json
    from viz.induction import copy_view, head_pattern, training_curves

    try:
        from viz.margins import reserve_tick_margins
    except ImportError:  # an older checkout: in viz.plotly_json, or (older still) nowhere
        reserve_tick_margins = getattr(plotly_json, "reserve_tick_margins", None)
    try:
        from viz.chart_style import house_style
    except ImportError:  # an older checkout: its figures went out with Streamlit's theme
        def house_style(fig: go.Figure) -> go.Figure:
            return fig

    def shown(fig: go.Figure, reserve: bool = True) -> str:
        for older in ("allow_tick_overflow", "upright_numeric_ticks"):  # what older checkouts set
            fig = getattr(plotly_json, older, lambda f: f)(fig)
        fig = house_style(fig)
        if reserve and reserve_tick_margins is not None:
            fig = reserve_tick_margins(fig)
        return fig.to_json()

    out = {"floor: one 64 × 64 heatmap": go.Figure(go.Heatmap(z=np.random.default_rng(0).random((64, 64)))).to_json()}
    induction = mechanisms_on_page(INDUCTION.file)[0]
    step = snapshot_steps()[-1]
    record = induction.build({"text": None, "seed": 0, "length": 63, "step": step})
    layer, head = record.meta["induction_head"]
    out["induction head view, 63 × 63, labels at every 2nd position"] = shown(head_pattern(record, layer, head, title="head"))
    out["the same, margins left to automargin"] = shown(head_pattern(record, layer, head, title="head"), reserve=False)
    typed = induction.build({"text": "k dog m sun p cat k dog m sun", "seed": 0, "length": 63, "step": step})
    out["induction copy view, 11 × 11"] = shown(copy_view(typed, title="copy"))
    out["induction training curves (4 subplots)"] = shown(training_curves(training_record(induction.id)))
    captioner = {m.id: m for m in mechanisms_on_page(IMAGES.file)}
    image = render_clean(build_scene([SceneObject("circle", "red", 8, 20, 18), SceneObject("square", "blue", 38, 22, 18)]))
    soft = captioner["soft"].build({"image": image})
    hard = captioner["hard"].build({"image": image, "temperature": 1.0, "samples": 50, "seed": 0, "mode": "sample"})
    out["images: soft caption panels (8 words)"] = shown(images.caption_figure(image, soft))
    out["images: hard caption panels (8 words × α, frequency)"] = shown(images.caption_figure(image, hard))
    if hasattr(images, "captions_figure"):
        out["images: soft and hard panels in one figure"] = shown(images.captions_figure(image, [soft, hard]))
        one = render_clean(build_scene([SceneObject("circle", "red", 8, 20, 18)]))
        records = [captioner["soft"].build({"image": one}),
                   captioner["hard"].build({"image": one, "temperature": 1.0, "samples": 20, "seed": 0, "mode": "sample"})]
        out["_react: images, one object"] = shown(images.captions_figure(one, records))
    try:  # the Playground's figure as the page builds it (pages/playground.py), for the react pair below
        from viz.query_keys import stages_figure
    except ImportError:  # an older checkout: no query–key plane
        stages_figure = None
    if stages_figure is not None:
        from models.playground.records import context_record, default_table, score_record, table_to_kv
        from models.registry import PLAYGROUND

        dot = mechanisms_on_page(PLAYGROUND.file)[0]
        labels, keys, values = table_to_kv(default_table())

        def playground(query: tuple[float, float]) -> go.Figure:
            record = dot.build({"query": np.array(query), "keys": keys, "values": values, "labels": labels,
                                "temperature": 1.0, "mode": "soft", "seed": 0, "samples": 100})
            return stages_figure(record, score_record(record), context_record(record), np.array(query), keys)[0]

        out["Playground: four panels (stages and query–key plane)"] = shown(playground((1.5, 0.5)))
        out["_react: Playground, query moved"] = shown(playground((-1.0, 0.5)))
    from viz.figures import record_figure  # a (query, key) heatmap with its own colour bar, as the CLI draws it

    bahdanau = get_mechanism("bahdanau").build({"text": "9 May 2018"})
    out["seq2seq: Bahdanau alignment (one heatmap, its own colour bar)"] = shown(record_figure(bahdanau))
    from models.feedforward.records import stacked_record  # the time axis ends just past its tick at 1,000
    from models.registry import FEEDFORWARD
    from viz.feedforward import alpha_over_time

    feedforward = mechanisms_on_page(FEEDFORWARD.file)
    names = [m.name for m in feedforward]
    both = stacked_record([m.build({"length": 1_001, "seed": 0, "marked": None}) for m in feedforward], names)
    over_time = alpha_over_time(both, title="α over 1,001 steps", row_titles=names)
    built_r = over_time.layout.margin.r
    spec = json.loads(shown(over_time))
    out["feed-forward α over 1,001 steps (two rows)"] = json.dumps(spec)
    spec["layout"]["margin"]["r"] = built_r
    out["the same, its right margin as built (no room for the last label)"] = json.dumps(spec)
    out["_mount"] = mount_figures()
    out["_plotly_js"] = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    return out


def mount_figures() -> dict[str, str]:
    """name → figure JSON for the mount table: each figure as the app prepares it (ui.widgets.show_panels'
    axis settings), sent with a template as Streamlit's default theme makes it (the theme's trace
    defaults, and its layout look, which the browser component writes into the template), and with this
    checkout's look written into the layout instead (viz/chart_style.py)."""
    import copy

    import numpy as np
    import plotly.graph_objects as go
    import plotly.io as pio
    import streamlit  # noqa: F401  (registers plotly.io.templates["streamlit"], the default theme's)

    sys.path.insert(0, str(ROOT))
    from viz import chart_style
    from viz.figures import bars_over_heatmap, heatmap, vectors_2d, weight_bars
    from viz.margins import reserve_tick_margins
    from viz.plotly_json import side_by_side
    from viz.transformer import head_heatmap, statistic_heatmap

    rng = np.random.default_rng(0)
    labels = [f"token{i}" for i in range(24)]
    keys = ["cat", "dog", "car", "truck", "bicycle"]
    alpha = np.array([0.4, 0.34, 0.06, 0.07, 0.13], np.float32)
    points = rng.random((5, 2)).astype(np.float32)

    def playground() -> go.Figure:  # the Playground's three panels: bars, bars over a one-row map, points
        weights = bars_over_heatmap(weight_bars(alpha, keys, title="α"), heatmap(alpha[None], ["query"], keys, title="", height=220))
        return side_by_side([weight_bars(alpha * 3, keys, title="scores"), weights,
                             vectors_2d(points, keys, weights=alpha, highlight=alpha @ points)], height=480)

    builders = {
        "64 × 64 heatmap (the floor's)": lambda: go.Figure(go.Heatmap(z=rng.random((64, 64)))),
        "self-attention head, 24 × 24": lambda: head_heatmap(rng.random((24, 24)).astype(np.float32), labels, title="head"),
        "head statistics, 6 × 12, values in cells": lambda: statistic_heatmap(
            rng.random((6, 12)).astype(np.float32), statistic="entropy", selected=(1, 2)),
        "Playground's three panels": playground,
    }
    look = {**chart_style.LAYOUT, "xaxis": chart_style.X_AXIS, "yaxis": chart_style.Y_AXIS,
            "coloraxis": chart_style.COLOR_AXIS}
    template = {"data": pio.templates["streamlit"].to_plotly_json()["data"], "layout": look}
    out = {}
    for name, build in builders.items():
        fig = build()
        if "floor" not in name:  # the floor app draws its figure as it is
            fig = reserve_tick_margins(fig)
        themed = json.loads(fig.to_json())
        themed["layout"]["template"] = copy.deepcopy(template)
        out[f"{name}, Streamlit's theme (a template)"] = json.dumps(themed)
        out[f"{name}, look in the layout"] = chart_style.house_style(fig).to_json()
        if hasattr(chart_style, "plain_vectors") and "Playground" in name:
            out[f"{name}, look in the layout, vectors as base64"] = json.dumps(_vectors_as_base64(json.loads(out[f"{name}, look in the layout"])))
    return out


def _vectors_as_base64(spec: dict) -> dict:
    """The figure with every list of numbers in its traces as plotly.py sends a numpy vector, a
    base64 typed array: what the app sent before viz.chart_style.plain_vectors."""
    import base64

    import numpy as np

    def encode(node):
        for key, value in node.items():
            if isinstance(value, dict):
                encode(value)
            elif isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                node[key] = {"dtype": "f8", "bdata": base64.b64encode(np.asarray(value, np.float64).tobytes()).decode()}
    for trace in spec["data"]:
        encode(trace)
    return spec


# Each measurement draws into a new <div> in the host element, emptied first.
FRESH_DIV = """    const el = document.getElementById(host); el.innerHTML = '';
    const div = document.createElement('div'); el.appendChild(div);
"""

# A mount in Streamlit's chart component: Plotly.react, then react again to the same figure through
# JSON (its theme pass). The ms of each call, to its promise.
MOUNT = """async ([spec, host]) => {
""" + FRESH_DIV + """    const first = JSON.parse(spec);
    const start = performance.now();
    await Plotly.react(div, first.data, first.layout);
    const middle = performance.now();
    const again = JSON.parse(spec);
    await Plotly.react(div, again.data, again.layout);
    return [middle - start, performance.now() - middle]; }"""


# Plotly.react from figure a to figure b and back, `times` times: the ms of each call (to its promise).
REACT = """async ([a, b, times, host]) => {
""" + FRESH_DIV + """    const figs = [JSON.parse(a), JSON.parse(b)], out = [];
    await Plotly.newPlot(div, figs[0].data, figs[0].layout);
    for (let i = 1; i <= 2 * times; i++) {
        const fig = JSON.parse(JSON.stringify(figs[i % 2]));  // new arrays, as a new message brings
        const start = performance.now();
        await Plotly.react(div, fig.data, fig.layout);
        out.push(performance.now() - start);
        await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    }
    return out; }"""

DRAW = """async ([spec, host]) => {
""" + FRESH_DIV + """    const fig = JSON.parse(spec);
    const start = performance.now();
    await Plotly.newPlot(div, fig.data, fig.layout);
    return performance.now() - start; }"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose builders make the figures")
    parser.add_argument("--repeat", type=int, default=30, help="draws per figure (default 30; the first 2 are dropped)")
    parser.add_argument("--json", type=Path, help="also write the raw times to this file")
    args = parser.parse_args()
    specs = figures(args.root.resolve())
    script = specs.pop("_plotly_js")
    mounts = specs.pop("_mount")
    mounted: dict[str, list[list[float]]] = {name: [] for name in mounts}
    one = specs.pop("_react: images, one object", None)
    two = specs.get("images: soft and hard panels in one figure")
    moved = specs.pop("_react: Playground, query moved", None)
    floor = specs["floor: one 64 × 64 heatmap"]
    pairs = {"images panels: one object ↔ two objects": (one, two), "images panels: one object ↔ one object": (one, one),
             "floor heatmap, the same values in new arrays": (floor, floor),
             "Playground: query (1.5, 0.5) ↔ (−1.0, 0.5)": (specs.get("Playground: four panels (stages and query–key plane)"), moved)}
    reacts: dict[str, list[float]] = {name: [] for name, (a, b) in pairs.items() if a and b}
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {name: [] for name in specs}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_content("<html><body><div id='host' style='width:1100px'></div></body></html>")
        page.add_script_tag(content=script)
        for i in range(args.repeat):
            for name, spec in specs.items():
                took = page.evaluate(DRAW, [spec, "host"])
                if i >= 2:
                    times[name].append(took)
        for i in range(args.repeat):
            for name, spec in mounts.items():
                took = page.evaluate(MOUNT, [spec, "host"])
                if i >= 2:
                    mounted[name].append(took)
        for _ in range(2):  # round-robin again, so that drift falls on both pairs alike
            for name in reacts:
                reacts[name] += page.evaluate(REACT, [*pairs[name], max(args.repeat // 4, 2), "host"])[2:]
        browser.close()
    floor = statistics.median(next(iter(times.values())))
    print(f"plotly.js draw (Plotly.newPlot → promise), headless Chromium, {args.repeat} draws each, "
          f"load average {os.getloadavg()[0]:.2f}; figures from {args.root}\n")
    print("| figure | median ms | × floor | kB |\n|---|---:|---:|---:|")
    for name, spec in specs.items():
        median = statistics.median(times[name])
        print(f"| {name} | {median:.1f} | {median / floor:.2f} | {len(spec) / 1e3:.0f} |")
    if reacts:
        print("\n| Plotly.react between two figures | median ms | n |\n|---|---:|---:|")
        for name, took in reacts.items():
            print(f"| {name} | {statistics.median(took):.1f} | {len(took)} |")
    print("\n| a chart's mount in Streamlit's component | first draw ms | theme pass's react ms | both ms | n |"
          "\n|---|---:|---:|---:|---:|")
    for name, took in mounted.items():
        first, again = (statistics.median(t[i] for t in took) for i in (0, 1))
        both = statistics.median(a + b for a, b in took)
        print(f"| {name} | {first:.1f} | {again:.1f} | {both:.1f} | {len(took)} |")
    if args.json:
        args.json.write_text(json.dumps({**times, **reacts, **mounted}, indent=1))


if __name__ == "__main__":
    main()
