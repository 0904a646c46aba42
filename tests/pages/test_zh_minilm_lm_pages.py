"""Self-attention, Transformer, Induction heads and Language model in Chinese (?lang=zh): no exception, and
no English UI text of the catalog left on the page (the check of tests/pages/test_zh_core_pages.py), in
every view of the self-attention page."""

import pytest

from tests.pages.test_zh_core_pages import open_zh, shown_texts, untranslated
from viz.i18n_text import catalog

_ = catalog("zh").gettext


@pytest.mark.parametrize("page", ["pages/transformer.py", "pages/induction.py", "pages/language_model.py"])
def test_page_in_chinese_shows_no_english_ui_text(page):
    at = open_zh(page)
    assert untranslated(shown_texts(at)) == []
    assert any(e.label == _("What the symbols mean") for e in at.get("expander"))  # every formula's legend


def test_self_attention_in_chinese_in_every_view():
    at = open_zh("pages/self_attention.py")
    assert untranslated(shown_texts(at)) == []
    notice = _("MiniLM (all-MiniLM-L6-v2) is an **English** model: its vocabulary and its training are English. "
               "Chinese is cut into single characters, some of them [UNK], and its attention says little about "
               "how the model reads Chinese.")
    assert at.info[0].value == notice != notice.replace("英文", "")  # said up front, in Chinese
    switch = next(b for b in at.get("button_group") if b.key == "sa_view")
    views = [o.content for o in switch.proto.options]
    assert views[0] == _("Head view") != "Head view"
    for view in ("model", "stats", "pair", "flow", "compare"):
        at.session_state["sa_view"] = view
        at.run()
        assert not at.exception, (view, at.exception)
        assert untranslated(shown_texts(at)) == [], view
