"""A user's folder from the model root, in Chromium, on the Language model and the Inside a language model
pages: one server started with ATTENTION_LAB_MODEL_ROOT (a root holding my-gpt, a copy of the committed
GPT-2 folder), shared by both pages' tests in this file."""

import numpy as np
import pytest

from models.lm.generate import generation_record
from models.lm.records import load_runner
from tests.e2e.conftest import plotly_traces, wait_idle, wait_stable
from tests.e2e.test_inside_lm_browser import CHOSEN, DEFAULTS, STEP, _step_rows
from tests.e2e.test_inside_lm_browser import _open as open_inside
from tests.e2e.test_language_model_browser import HEAD, LONG_WAIT
from tests.e2e.test_language_model_browser import _open as open_language_model
from ui.inside_lm import DEFAULT_PROMPT

pytestmark = pytest.mark.e2e


def test_the_language_model_page_reads_a_user_folder(page, model_root_url):
    url, root = model_root_url
    before = open_language_model(page, url)
    page.get_by_text("Model folder").click()
    box = page.get_by_label("A Hugging Face folder under the model root", exact=False)
    box.fill("my-gpt")
    box.press("Enter")
    page.get_by_text("my-gpt").first.wait_for(timeout=LONG_WAIT)
    wait_idle(page, timeout=LONG_WAIT)
    text = page.get_by_label("Text", exact=True).input_value()
    record = load_runner(root / "my-gpt").attention(text)
    now = plotly_traces(page)
    assert len(now[HEAD][0]["z"]) == record.weights.shape[-1]
    title = page.locator(".js-plotly-plot").first.evaluate("el => el.layout.title.text")  # "Layer L, head H"
    layer, head = (int(part.split()[-1]) for part in title.split(","))
    z = now[HEAD][0]["z"]
    want = record.weights[layer, head]
    assert max(abs(a - b) for row, wrow in zip(z, want) for a, b in zip(row, wrow)) < 1e-4
    assert before[HEAD][0]["y"] == now[HEAD][0]["y"]  # the same tokenizer: a copy of the folder

    box.fill("../outside")
    box.press("Enter")
    page.get_by_text("that model folder is not available here").first.wait_for(timeout=60_000)


def test_the_inside_page_reads_a_user_folder(page, model_root_url):
    url, root = model_root_url
    open_inside(page, url)
    page.get_by_text("Model folder").click()
    box = page.get_by_label("A Hugging Face folder under the model root", exact=False)
    box.fill("my-gpt")
    box.press("Enter")
    page.get_by_text("my-gpt").first.wait_for(timeout=LONG_WAIT)
    now = wait_stable(page)
    record = generation_record(load_runner(root / "my-gpt"), DEFAULT_PROMPT, **DEFAULTS)
    np.testing.assert_allclose(np.asarray(now[STEP][0]["z"]), _step_rows(record, 1), atol=1e-5)
    np.testing.assert_allclose(np.asarray(now[CHOSEN][0]["y"]), record.extras["chosen_prob"], atol=1e-5)

    box.fill("../outside")
    box.press("Enter")
    page.get_by_text("that model folder is not available here").first.wait_for(timeout=60_000)
