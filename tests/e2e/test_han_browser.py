"""The Hierarchical attention page in Chromium: type a document, the heatmap follows; no script runs from the text."""

import re
import time

import numpy as np
import pytest

from tests.e2e.conftest import (
    plotly_traces,
    pushed_margins,
    screenshot_path,
    wait_for_change,
    wait_for_charts,
    wait_idle,
)

pytestmark = pytest.mark.e2e

HEATMAP, US_SCORES = 2, 4  # sentiment bars, topic bars, heatmap, u_w words, u_s sentences
DIFFERENCES = (6, 7)  # after document B's heatmap: its sentences' and its words' B − A
BARS = (0, 1, 3, 4)
# How many pairs of a chart's cell words overlap on screen (their boxes, less half a pixel).
OVERLAPPING_CELL_WORDS = """chart => {
    const gd = document.querySelectorAll('.js-plotly-plot')[chart];
    const boxes = Array.from(gd.querySelectorAll('.heatmaplayer text'), t => t.getBoundingClientRect());
    if (boxes.length < 10) return -1;  // not the map with its words
    let overlaps = 0;
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) overlaps++;
    }
    return overlaps; }"""
DOCUMENT = (
    "<img src=x onerror=alert(1)> We visited on a rainy Sunday. "
    "The pizza was cold and tasted like cardboard. My cousin paid and we left."
)


def test_typing_a_document_updates_the_heatmap_and_stays_escaped(page, listen, app_url):
    dialogs = []
    listen("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    # The first visit loads MiniLM's table and compiles the HAN: allow for a busy machine.
    page.goto(f"{app_url}/han")
    page.get_by_text("Hierarchical attention").first.wait_for(timeout=90_000)
    wait_for_charts(page, 5, timeout=240_000)
    wait_idle(page, timeout=120_000)
    before = plotly_traces(page)
    assert len(before[HEATMAP][1]["y"]) == 4  # four sentences in the default document
    # Every bar has its label: a two-class chart's plot was 18 px and plotly.js labelled one bar.
    labelled = page.evaluate("bars => bars.map(i => { const gd = document.querySelectorAll('.js-plotly-plot')[i];"
                             " return [gd._fullLayout.yaxis._vals.length, gd.data[0].y.length]; })", list(BARS))
    assert [shown == bars for shown, bars in labelled] == [True] * len(BARS), labelled
    # The words written in the map's cells do not run into each other, and its margins held.
    assert page.evaluate(OVERLAPPING_CELL_WORDS, HEATMAP) == 0
    assert pushed_margins(page)[HEATMAP] == {}
    # The default compare section's B − A maps (one row each, under long turned labels) keep their
    # row readable, and their label margins held: drawn once.
    wait_for_charts(page, DIFFERENCES[-1] + 1, timeout=120_000)
    plot_heights = page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot'), gd => gd._fullLayout._size.h)")
    assert min(plot_heights[i] for i in DIFFERENCES) >= 80
    assert [pushed_margins(page)[i] for i in DIFFERENCES] == [{}, {}]

    box = page.get_by_label("Type or paste a document of several sentences")
    box.fill(DOCUMENT)
    box.press("Control+Enter")
    after = wait_for_change(page, before, timeout=90)
    wait_idle(page)
    def settled(traces) -> bool:  # the charts are redrawn one after the other: wait for all of them
        return (len(traces) > US_SCORES and len(traces[HEATMAP]) > 1 and len(traces[HEATMAP][1]["y"]) == 3
                and bool(traces[US_SCORES]) and len(traces[US_SCORES][0]["y"]) == 3)

    deadline = time.time() + 90
    while not settled(after) and time.time() < deadline:
        time.sleep(0.2)
        after = plotly_traces(page)
    assert len(after[HEATMAP][1]["y"]) == 3 and len(after[US_SCORES][0]["y"]) == 3
    z = after[HEATMAP][1]["z"]
    assert z != before[HEATMAP][1]["z"]
    sentence_alpha = [row[0] for row in after[HEATMAP][0]["z"]]
    assert sentence_alpha.index(max(sentence_alpha)) == 1  # the opinion sentence

    text = page.locator(".han-text").first  # the compare section below draws its own
    assert text.locator("img").count() == 0
    assert "<img src=x onerror=alert(1)>" in text.inner_text()
    assert dialogs == []

    page.get_by_text("Where the network looked").first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.mouse.move(0, 0)
    page.screenshot(path=screenshot_path("han.png"))


def test_train_your_own_stops_on_request_and_offers_the_model(page, app_url, tmp_path):
    from models.han.train import example_csv_bytes

    csv = tmp_path / "reviews.csv"
    csv.write_bytes(example_csv_bytes(count=480))  # 60 steps an epoch: training lasts long enough to stop
    page.goto(f"{app_url}/han")
    page.get_by_text("Train your own").first.wait_for(timeout=90_000)
    wait_idle(page, timeout=240_000)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(csv))
    page.get_by_text("480 rows, 2 classes").first.wait_for(timeout=60_000)
    wait_idle(page)
    page.get_by_role("button", name="Train", exact=True).click()
    # The progress bar reports steps while an epoch runs; Stop interrupts the run.
    # after MiniLM read the documents and the step compiled
    page.get_by_text(re.compile(r"epoch [1-5]/5: step \d+/300")).first.wait_for(timeout=240_000)
    page.get_by_role("button", name="Stop training").click()
    stopped = page.get_by_text("Your model: stopped after")
    stopped.first.wait_for(timeout=120_000)
    wait_idle(page, timeout=120_000)
    message = stopped.first.inner_text()
    steps_done = int(message.split("stopped after ")[1].split(" training steps")[0])
    epochs_done = int(message.split("steps, ")[1].split(" of 5 epochs")[0])
    assert steps_done >= 1 and 0 <= epochs_done < 5
    assert page.get_by_role("button", name="Stop training").count() == 0
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the trained model (safetensors)").click()
    path = download.value.path()
    from safetensors.numpy import load, load_file

    from models.han.model import CHECKPOINT
    from models.han.train import TrainState, own_config

    cfg = own_config(("negative", "positive"))
    fresh = TrainState.create(cfg, seed=0, learning_rate=1e-2)
    initial = load(CHECKPOINT.to_bytes(cfg, fresh.state))
    trained = load_file(str(path))
    assert trained.keys() == initial.keys()
    assert any(not np.array_equal(trained[k], initial[k]) for k in trained)  # the stopped model kept its steps


def test_user_text_in_an_error_shows_as_typed(page, app_url, tmp_path):
    # Column names come back in the message; markdown must not turn them into maths or emphasis.
    csv = tmp_path / "odd.csv"
    csv.write_bytes(b"$x$,*stars*,_b_\n1,2,3\n")
    page.goto(f"{app_url}/han")
    page.get_by_text("Train your own").first.wait_for(timeout=90_000)
    wait_idle(page, timeout=240_000)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(csv))
    alert = page.locator('[data-testid="stAlertContentError"]').filter(has_text="found columns")
    alert.first.wait_for(timeout=60_000)
    assert "found columns: $x$, *stars*, _b_" in alert.first.inner_text()
    assert alert.first.locator("em, strong, .katex").count() == 0
