"""AppTest for the Hierarchical attention page: prediction, safe highlighting, heatmap, CSV errors."""

import numpy as np
import pytest

from tests.pages.conftest import chart_data, chart_specs, open_page

XSS = "<img src=x onerror=alert(1)>"
HEATMAP = 2  # charts: sentiment bars, topic bars, heatmap, u_w words, u_s sentences


def _text_html(at) -> str:
    return next(m.value for m in at.markdown if "han-text" in m.value)


def test_han_page_reads_a_document_escapes_it_and_reacts_to_new_text():
    at = open_page("pages/han.py")
    assert not at.exception
    specs = chart_specs(at)
    assert len(specs) == 8  # 2 predictions, the heatmap, u_w, u_s; document B and the two differences
    word_alpha = chart_data(at, HEATMAP, "z", trace=1)
    sentence_alpha = chart_data(at, HEATMAP, "z", trace=0)
    assert word_alpha.shape[0] == 4
    np.testing.assert_allclose(np.nansum(word_alpha, axis=1), 1.0, rtol=1e-4)
    assert int(np.argmax(sentence_alpha[:, 0])) == 2  # "The waiter forgot our order twice and was rude ..."
    titles = [s["layout"]["title"]["text"] for s in specs[:2]]
    assert titles == ["sentiment: negative", "topic: service"]

    at.text_area(key="han_text").set_value(f"{XSS} We sat by the door. The pasta was delicious.").run()
    assert not at.exception
    html_text = _text_html(at)
    assert "&lt;img" in html_text and "<img" not in html_text
    assert chart_data(at, HEATMAP, "z", trace=1).shape[0] == 2
    assert [s["layout"]["title"]["text"] for s in chart_specs(at)[:2]] == ["sentiment: positive", "topic: quality"]
    assert not at.warning  # an opinion was found: no notice


def test_a_document_without_an_opinion_says_its_attention_is_spread():
    at = open_page("pages/han.py")
    at.text_area(key="han_text").set_value(
        "The kettle is grey. It has a blue light and a metal lid. We keep it next to the fridge. I bought it on a Tuesday."
    ).run()
    assert not at.exception
    notices = [w.value for w in at.warning]
    assert len(notices) == 1 and notices[0].startswith("No sentence stands out"), notices
    sentence_alpha = chart_data(at, HEATMAP, "z", trace=0)[:, 0]
    assert sentence_alpha.max() < 0.5  # spread, as the notice says


def test_the_page_says_up_front_that_the_model_reads_english_and_flags_a_chinese_review():
    at = open_page("pages/han.py")
    assert at.info[0].value.startswith("**This model reads English.**")  # before any text is typed
    assert not at.warning
    at.text_area(key="han_text").set_value("服务员很粗鲁！我们等了一个小时。菜还不错，但是太贵了。").run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    # Beside the prediction, and beside the map of where the network looked.
    assert warnings[0].startswith("Outside what the model knows") and warnings[1].startswith("This model reads English")
    assert chart_data(at, HEATMAP, "z", trace=1).shape[0] == 3  # three sentences, split at ！ and 。


def test_the_pages_notices_are_the_models_own_texts():
    from models.han import records
    from ui import han

    assert han.NO_OPINION_NOTICE == records.NO_OPINION_NOTICE
    assert han.EVEN_OPINIONS_NOTICE == records.EVEN_OPINIONS_NOTICE
    assert set(han.READING_NOTICES) == {records.ENGLISH_NOTICE, records.SHORT_NOTICE}


def test_han_page_bad_input_messages():
    at = open_page("pages/han.py")
    at.text_area(key="han_text").set_value("   ").run()
    assert not at.exception
    assert any("empty" in e.value for e in at.error)
    at.text_area(key="han_text").set_value("Fine food.").run()
    upload = at.get("file_uploader")[0]
    upload.set_value(("one.csv", b"text,label\na,x\nb,x\nc,x\nd,x\n", "text/csv"))
    at.run()
    assert not at.exception
    assert any("at least two classes" in e.value for e in at.error)
    upload = at.get("file_uploader")[0]
    upload.set_value(("cols.csv", b"body,stars\na,1\n", "text/csv"))
    at.run()
    assert any("needs a 'text' and a 'label' column" in e.value for e in at.error)


def _train_your_own_alone():
    from ui.han import train_your_own

    train_your_own()


def _wait_for_the_job(at, timeout=300):
    import time

    from ui.han import JOB_KEY, training_service

    job = training_service().get(at.session_state[JOB_KEY])
    deadline = time.time() + timeout
    while job.active and time.time() < deadline:
        time.sleep(0.2)
    assert not job.active, f"the training job is still {job.status}"
    return job


def test_train_your_own_trains_in_the_background_and_offers_the_model(served_downloads, monkeypatch, tmp_path):
    # The section alone (AppTest.from_function): on the full page, AppTest loses the Train
    # click after an upload; Chromium does not (tests/e2e/test_han_browser.py).
    from safetensors.numpy import load
    from streamlit.testing.v1 import AppTest

    from models.checkpoint import flat_params
    from models.han import store as han_store
    from models.han.model import CHECKPOINT
    from models.han.train import TrainState, example_csv_bytes

    monkeypatch.setattr(han_store, "OWN_DIR", tmp_path)
    at = AppTest.from_function(_train_your_own_alone, default_timeout=600).run()
    at.get("file_uploader")[0].set_value(("reviews.csv", example_csv_bytes(count=64), "text/csv"))
    at.run()
    assert any("64 rows, 2 classes" in c.value for c in at.caption)
    at.slider(key="han_own_epochs").set_value(2).run()
    at.button(key="han_train_start").click().run()
    assert not at.exception
    job = _wait_for_the_job(at)
    assert job.status == "done" and at.query_params["model"] == job.id
    at.run()
    done = [s.value for s in at.success]
    model = at.session_state["han_model"]
    assert model.steps > 0 and model.epoch == 2 and model.finished
    assert done and done[0].startswith(f"Your model: trained after {model.steps} training steps, 2 of 2 epochs complete"), done
    losses = [float(x) for x in done[0].split("loss per epoch: ")[1].rstrip(").").split(", ")]
    assert len(losses) == 2 and losses[1] < losses[0]
    assert "han_train_stop" not in [b.key for b in at.button]  # no Stop button once done
    assert at.button(key="han_train_start").label == "Train again"
    served = served_downloads(at, "Download the trained model (safetensors)")
    cfg, _, state, info = CHECKPOINT.load_bytes(served)  # the bytes a click downloads
    assert cfg == model.cfg and info["trained_on"] == "reviews.csv" and info["steps"] == model.steps
    trained, fresh = flat_params(state), flat_params(TrainState.create(model.cfg, seed=0, learning_rate=1e-2).state)
    assert all(np.array_equal(trained[k], v) for k, v in flat_params(model.state).items())  # the model trained here
    assert any(not np.array_equal(trained[k], fresh[k]) for k in fresh)  # not the initial weights
    assert load(served).keys() == load(CHECKPOINT.to_bytes(model.cfg, model.state)).keys()
    at.text_area(key="han_own_text").set_value("The soup was wonderful. We will come back.").run()
    assert not at.exception
    assert at.metric[0].value in ("positive", "negative")

    # A reload is a new session with the same URL: the model comes back from disk.
    again = AppTest.from_function(_train_your_own_alone, default_timeout=600)
    again.query_params["model"] = job.id
    again.run()
    assert not again.exception
    assert [s.value for s in again.success] == done
    # Train again asks first, and keeps the model when told to.
    at.button(key="han_train_start").click().run()
    assert any("replaces your model trained on reviews.csv" in w.value for w in at.warning)
    at.button(key="han_train_keep").click().run()
    assert not at.warning and at.session_state["han_model"] is model


def test_out_of_range_widget_values_are_refused_on_the_server():
    from streamlit.testing.v1 import AppTest

    from models.han.train import example_csv_bytes

    at = AppTest.from_function(_train_your_own_alone, default_timeout=600).run()
    at.get("file_uploader")[0].set_value(("reviews.csv", example_csv_bytes(count=16), "text/csv"))
    at.run()
    at.session_state["han_own_epochs"] = 10**9  # what a scripted client could send
    at.run()
    assert not at.exception and at.slider(key="han_own_epochs").value <= 10


def test_two_documents_and_their_differences():
    from models.compare import align_tokens
    from models.han.records import document_word_weights
    from models.registry import get_mechanism

    at = open_page("pages/han.py")
    text_a, text_b = at.text_area(key="han_text").value, at.text_area(key="han_text_b").value
    han = get_mechanism("han")
    a, b = han.build({"text": text_a}), han.build({"text": text_b})
    sentences, words = chart_specs(at)[6], chart_specs(at)[7]
    assert sentences["layout"]["title"]["text"] == "Sentence α: B − A"
    shown = chart_data(at, 6)[0]
    alignment = align_tokens(a.query_labels, b.query_labels)
    for k, (i, j) in enumerate(zip(alignment.in_a, alignment.in_b)):
        if i >= 0 and j >= 0:
            assert shown[k] == pytest.approx(b.extras["sentence_weights"][j] - a.extras["sentence_weights"][i], abs=1e-5)
        else:
            assert np.isnan(shown[k])
    assert np.isnan(shown).sum() == 2, "the waiter sentence differs: one (A only), one (B only)"
    labels_a, weights_a = document_word_weights(a)
    assert weights_a.sum() == pytest.approx(1.0, abs=1e-4) and len(labels_a) == len(text_a.split())
    assert any("(B only)" in x for x in words["data"][0]["x"])
    at.text_area(key="han_text_b").set_value(text_a).run()
    assert np.all(chart_data(at, 6) == 0.0) and np.all(chart_data(at, 7) == 0.0)


def _shown_after_absence(box) -> str:
    # A browser forgets a widget's value when a run ends without it (Streamlit's frontend drops
    # inactive widget state); when the box comes back it shows what the run sent: the value
    # set through session state, else the widget's default. AppTest's .value is the server's.
    return box.proto.value if box.proto.set_value else box.proto.default


@pytest.mark.parametrize("text_b", [None, "My own document B. The staff were lovely and quick."])
def test_document_b_keeps_its_text_after_document_a_was_invalid(text_b):
    at = open_page("pages/han.py")
    default_b = at.text_area(key="han_text_b").value
    if text_b is not None:
        at.text_area(key="han_text_b").set_value(text_b).run()
    expected = text_b or default_b
    at.text_area(key="han_text").set_value("   ").run()
    assert not at.exception and len(at.error) == 1
    assert "han_text_b" not in [t.key for t in at.text_area]  # the page stopped above document B
    # A shares a sentence with either B, so that the sentences' B − A has something to draw.
    at.text_area(key="han_text").set_value("The food was cold. The staff were lovely and quick. "
                                           "We took the bus home afterwards.").run()
    for _ in range(2):  # the run that draws the box again, then the browser's next run with what it shows
        assert not at.exception
        box = at.text_area(key="han_text_b")
        assert _shown_after_absence(box) == expected and box.value == expected
        assert at.query_params.get("han_text_b") == text_b  # None: the default text stays out of the URL
        assert not any("Type a document B" in i.value for i in at.info)
        assert len(chart_specs(at)) == 8, "document B's analysis and the two differences are shown"
        box.set_value(_shown_after_absence(box)).run()
