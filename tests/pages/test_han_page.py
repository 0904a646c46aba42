"""AppTest for the Hierarchical attention page: prediction, safe highlighting, heatmap, CSV errors."""

import numpy as np

from tests.pages.conftest import chart_data, chart_specs, open_page

XSS = "<img src=x onerror=alert(1)>"
HEATMAP = 2  # charts: sentiment bars, topic bars, heatmap, u_w words, u_s sentences


def _text_html(at) -> str:
    return next(m.value for m in at.markdown if "han-text" in m.value)


def test_han_page_reads_a_document_escapes_it_and_reacts_to_new_text():
    at = open_page("pages/han.py")
    assert not at.exception
    specs = chart_specs(at)
    assert len(specs) == 5
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
    assert [s["layout"]["title"]["text"] for s in chart_specs(at)[:2]] == ["sentiment: positive", "topic: food"]


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
