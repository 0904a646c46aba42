"""The Inside a language model page in Chromium: the GPT trained here (the step view of what each head read
to write a token, moved by the step slider; the step in the link; the Chinese page). A user's folder:
tests/e2e/test_model_root_browser.py."""


import numpy as np
import pytest

from models.lm.generate import generation_record
from models.lm.records import load_runner
from tests.e2e.conftest import plotly_traces, screenshot_path, wait_for_charts, wait_idle, wait_stable
from ui.inside_lm import DEFAULT_PROMPT

pytestmark = pytest.mark.e2e

LONG_WAIT = 300_000  # a cold server loads the model and compiles the generation first
STEP, CHOSEN = range(2)  # the charts of the first view; the head and model views are views of their own
DEFAULTS = {"max_new": 12, "temperature": 0.0, "top_k": 0, "seed": 0}


def _open(page, url: str, query: str = "") -> list:
    page.goto(f"{url}/inside_lm{query}", timeout=LONG_WAIT)
    wait_for_charts(page, 2, timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    return plotly_traces(page)


def _step_rows(record, step: int) -> np.ndarray:
    # every layer's heads' row of the query that wrote written token `step` (1-based)
    n = int(record.meta["n_prompt"])
    layers, heads = record.weights.shape[:2]
    query = n - 2 + step
    return record.weights[:, :, query, : query + 1].reshape(layers * heads, query + 1)


def test_the_model_trained_here_and_its_step_slider(page, app_url):
    record = generation_record(load_runner(None), DEFAULT_PROMPT, **DEFAULTS)
    before = _open(page, app_url)
    np.testing.assert_allclose(np.asarray(before[STEP][0]["z"]), _step_rows(record, 1), atol=1e-5)
    page.screenshot(path=screenshot_path("inside_lm.png"), full_page=True)

    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Step").locator('input[type="range"]')
    slider.focus()
    for _ in range(3):
        slider.press("ArrowRight")
    after = wait_stable(page)
    np.testing.assert_allclose(np.asarray(after[STEP][0]["z"]), _step_rows(record, 4), atol=1e-5)
    assert "inside_step=4" in page.url  # the step is in the link

    zh = _open(page, app_url, "?lang=zh")
    page.get_by_text("语言模型内部").first.wait_for()
    np.testing.assert_allclose(np.asarray(zh[STEP][0]["z"]), _step_rows(record, 1), atol=1e-5)


def test_moving_n_shows_the_first_n_tokens_of_one_generation(page, app_url):
    # N is cut from the longest generation (written once, in the background), not generated again: each
    # step of the slider shows what generating N tokens shows.
    runner = load_runner(None)
    _open(page, app_url)
    slider = page.locator('[data-testid="stSlider"]').filter(has_text="Tokens to write").locator('input[type="range"]')
    slider.focus()
    for n in (13, 14, 15):
        slider.press("ArrowRight")
        shown = wait_stable(page)
        made = generation_record(runner, DEFAULT_PROMPT, **{**DEFAULTS, "max_new": n})
        np.testing.assert_allclose(np.asarray(shown[CHOSEN][0]["y"]), made.extras["chosen_prob"], atol=1e-5)
    assert "inside_n=15" in page.url

