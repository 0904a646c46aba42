"""AppTest of the corpus page: the bundled sample runs, every head is a point, a head's top inputs and
its joint query–key plane show; an upload is checked on the server."""

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from models.corpus import run as corpus
from models.corpus.heads import STATISTIC_IDS
from models.corpus.texts import sample_texts
from tests.pages.conftest import chart_specs, decode, open_page

PAGE = "pages/corpus.py"
HEADS, PLANE = 0, 1


@pytest.fixture(scope="module")
def at():
    app = open_page(PAGE, timeout=600)
    assert not app.exception, app.exception
    app.button(key="corpus_run").click().run()
    assert not app.exception, app.exception
    return app


TOP_LINE = re.compile(r"^(\d+)\. ([\d.]+) nats · input (\d+): \[(.*)\]\((\S+)\)$", re.M)


def top_inputs(at) -> list[tuple[str, ...]]:
    """The selected head's top inputs as the page lists them: (rank, entropy, input, text, url)."""
    return next(found for md in at.markdown if (found := TOP_LINE.findall(md.value)))


def _xy(trace):
    return np.asarray(decode(trace["x"]), float), np.asarray(decode(trace["y"]), float)


def test_every_head_is_a_point_at_its_corpus_means(at):
    assert at.title[0].value == "Many inputs: head statistics"
    stats = at.session_state["corpus_stats"]
    assert stats.count == len(sample_texts()) == 60 and not stats.stopped
    specs = chart_specs(at)
    layers = [t for t in specs[HEADS]["data"] if t["name"].startswith("layer ")]
    assert len(layers) == 6
    x, y = _xy(layers[3])
    assert x.shape == (12,)
    np.testing.assert_allclose(x, stats.mean[3, :, STATISTIC_IDS.index("entropy")], atol=1e-6)
    np.testing.assert_allclose(y, stats.mean[3, :, STATISTIC_IDS.index("previous_score")], atol=1e-6)
    # The previous-token head of layer 0 (measured: head 2) is far up the previous-token axis.
    x0, y0 = _xy(layers[0])
    assert y0.max() > 0.9 and x0[np.argmax(y0)] < 0.5


def test_axes_follow_the_pickers(at):
    at.selectbox(key="corpus_y").set_value("distance").run()
    assert not at.exception
    stats = at.session_state["corpus_stats"]
    _, y = _xy(chart_specs(at)[HEADS]["data"][1])
    np.testing.assert_allclose(y, stats.mean[1, :, STATISTIC_IDS.index("distance")], atol=1e-6)
    at.selectbox(key="corpus_y").set_value("previous_score").run()


def test_a_head_shows_its_sharpest_inputs_and_its_query_key_plane(at):
    at.selectbox(key="corpus_layer").set_value(0).run()
    at.selectbox(key="corpus_head").set_value(2).run()
    assert not at.exception, at.exception
    stats = at.session_state["corpus_stats"]
    rows = top_inputs(at)
    assert len(rows) == corpus.TOP_K
    np.testing.assert_allclose([float(r[1]) for r in rows], stats.top_entropy[0, 2], atol=1e-3)
    assert {parse_qs(urlsplit(r[4]).query)["sa_text"][0] for r in rows} <= set(sample_texts())
    plane = chart_specs(at)[PLANE]
    names = [t["name"] for t in plane["data"]]
    assert names == ["queries", "keys"]
    qx, _ = _xy(plane["data"][0])
    kx, _ = _xy(plane["data"][1])
    assert qx.size == kx.size > 500  # every token of the sample, once as a query and once as a key


def test_each_top_input_links_to_the_self_attention_page_on_its_text_layer_and_head(at):
    at.selectbox(key="corpus_layer").set_value(1).run()
    at.selectbox(key="corpus_head").set_value(3).run()
    stats = at.session_state["corpus_stats"]
    for rank, _, number, _, link in top_inputs(at):
        url = urlsplit(link)
        assert url.path == "self_attention"
        text = stats.texts[int(number) - 1]
        assert parse_qs(url.query) == {"sa_text": [text], "sa_layer": ["1"], "sa_head": ["3"]}
        assert int(stats.top_index[1, 3, int(rank) - 1]) == int(number) - 1


def test_the_lm_runs_with_the_first_token_share_and_links_to_the_language_model_page():
    from models.corpus.heads import LM_STATISTIC_IDS

    app = open_page(PAGE, timeout=600)
    app.radio(key="corpus_model").set_value("lm").run()
    app.button(key="corpus_run").click().run()
    assert not app.exception, app.exception
    stats = app.session_state["corpus_stats"]
    assert stats.statistics == LM_STATISTIC_IDS and stats.count == 60 and stats.mean.shape[:2] == (2, 4)
    assert "Share on the first token" in app.selectbox(key="corpus_x").options
    assert len([t for t in chart_specs(app)[HEADS]["data"] if t["name"].startswith("layer ")]) == 2
    link = urlsplit(top_inputs(app)[0][4])
    assert link.path == "language_model" and parse_qs(link.query)["lm_layer"] == ["0"]
    assert any("MiniLM" in info.value for info in app.info)  # no query-key plane for the LM


def test_chinese_runs_without_an_exception():
    from streamlit.testing.v1 import AppTest

    from tests.pages.conftest import APP

    app = AppTest.from_file(APP, default_timeout=600)
    app.query_params = {"lang": "zh"}
    app.context = {"locale": "en-US"}
    app.run()
    app.switch_page(PAGE)
    app.run()
    app.button(key="corpus_run").click().run()
    assert not app.exception, app.exception
    assert app.title[0].value == "多个输入：注意力头统计"
    assert "lang=zh" in "".join(md.value for md in app.markdown)


@pytest.mark.parametrize("data,message", [
    (b"\xff\xfe\x00bad", "not UTF-8"),
    (b"   \n  \n", "empty"),
    (b"x" * 2_000_001, "the limit is 2 MB"),
])
def test_a_bad_upload_is_one_line_checked_on_the_server(data, message):
    from models.corpus.texts import upload_text
    from models.record import InputError

    with pytest.raises(InputError, match=message):
        upload_text(data)


def test_a_csv_upload_reads_the_chosen_column():
    from models.corpus.texts import csv_header, upload_text, upload_texts

    text = upload_text(b'id,Text\n1,"a, b"\n2,\n3,c\n')
    assert csv_header(text) == ["id", "text"]
    assert upload_texts(text, "text") == ["a, b", "c"]
    assert upload_texts("one\n\ntwo\n") == ["one", "two"]
