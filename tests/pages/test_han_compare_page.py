"""HAN page, "Compare two documents": a B with nothing in common with A says why there is no B − A."""

from tests.pages.conftest import chart_specs, open_page


def test_a_document_b_sharing_no_word_with_a_says_why_instead_of_two_blank_maps():
    at = open_page("pages/han.py")
    charts = len(chart_specs(at))
    at.text_area(key="han_text_b").set_value("服务员很粗鲁。食物很冷。我们不会再来了。").run()
    assert not at.exception, at.exception
    assert any("no word in common" in i.value for i in at.info)
    assert len(chart_specs(at)) == charts - 2  # B's own maps stay; the two blank difference maps are gone
    titles = [s["layout"]["title"]["text"] for s in chart_specs(at) if s["layout"].get("title")]
    assert "Sentence α: B − A" not in titles
