"""cli.py export --lang: a figure export's own texts (axis titles, hover) in the language asked for,
the same texts the page shows in that language; data exports are the same in every language."""

import json

import pytest

from tests.cli.test_cli import cli
from viz.i18n_text import catalog

ZH = catalog("zh").gettext


@pytest.mark.parametrize("fmt", ["html", "svg"])
def test_a_figure_export_in_chinese_has_the_catalogs_texts(tmp_path, fmt):
    en, zh = tmp_path / f"en.{fmt}", tmp_path / f"zh.{fmt}"
    for out, language in ((en, "en"), (zh, "zh")):
        result = cli("export", "--mechanism", "qkv-dot", "--query", "1,2", "--format", fmt, "--out", str(out),
                     "--lang", language)
        assert result.returncode == 0, result.stderr
    english, chinese = en.read_text(encoding="utf-8"), zh.read_text(encoding="utf-8")
    assert ZH("query") != "query" and ZH("key") != "key"
    for word in ("query", "key"):  # the axis titles of the record's default figure
        # SVG writes the text; plotly's HTML holds it in its JSON, non-ASCII escaped
        forms = (f">{ZH(word)}<", f'"text":{json.dumps(ZH(word))}', f'"text": {json.dumps(ZH(word))}')
        assert any(form in chinese for form in forms), word
        assert not any(form in english for form in forms), word


def test_data_exports_do_not_depend_on_the_language_and_a_language_the_app_lacks_is_refused(tmp_path):
    outs = []
    for language in ("en", "zh"):
        out = tmp_path / f"{language}.csv"
        assert cli("export", "--mechanism", "qkv-dot", "--query", "1,2", "--format", "csv", "--out", str(out),
                   "--lang", language).returncode == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    bad = cli("export", "--mechanism", "qkv-dot", "--format", "csv", "--out", str(tmp_path / "x.csv"), "--lang", "fr")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "fr" in bad.stderr
