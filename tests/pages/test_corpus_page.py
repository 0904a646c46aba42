"""AppTest of the corpus page: the bundled sample runs, every head is a point, a head's top inputs and
its joint query–key plane show; an upload is checked on the server."""

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
    table = at.dataframe[0].value
    assert len(table) == corpus.TOP_K
    np.testing.assert_allclose(table["entropy (nats)"].to_numpy(), np.round(stats.top_entropy[0, 2], 3))
    assert set(table["text"]) <= set(sample_texts())
    plane = chart_specs(at)[PLANE]
    names = [t["name"] for t in plane["data"]]
    assert names == ["queries", "keys"]
    qx, _ = _xy(plane["data"][0])
    kx, _ = _xy(plane["data"][1])
    assert qx.size == kx.size > 500  # every token of the sample, once as a query and once as a key


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
