"""Chinese in exported figures is drawn with a CJK font (glyphs, not boxes): tools/chromium.sh
installs one beside the browser, and viz/fonts.py names it in the figures' font stack."""

import re
import shutil
import subprocess

import plotly.graph_objects as go

from viz.export import figure_bytes, image_export_available
from viz.fonts import CJK_BASE_FONT_NAMES, CJK_FONTS, FONT_FAMILY


def _base_fonts(pdf: bytes) -> list[bytes]:
    return re.findall(rb"/BaseFont\s*/([A-Za-z0-9+#._-]+)", pdf)


def test_the_font_stack_names_a_cjk_font_before_the_generic_family():
    families = [f.strip() for f in FONT_FAMILY.split(",")]
    assert families[-1] == "sans-serif" and set(CJK_FONTS) <= set(families[1:-1])


def test_a_chinese_title_exported_to_pdf_embeds_a_cjk_font():
    ok, hint = image_export_available()
    assert ok, hint  # the test command installs Chromium and the font; without them this must fail, not skip
    fig = go.Figure(go.Bar(x=["查询", "键", "值"], y=[0.5, 0.3, 0.2]))
    fig.update_layout(title="注意力权重 α（软注意力）", font={"family": FONT_FAMILY}, width=480, height=320)
    fonts = _base_fonts(figure_bytes(fig, "pdf", width=480, height=320))
    assert fonts, "the PDF names no fonts"
    cjk = [name for name in fonts if any(known in name for known in CJK_BASE_FONT_NAMES)]
    assert cjk, f"no CJK font embedded, only {sorted(set(fonts))}: run tools/chromium.sh as root, or install " \
        "fonts-wqy-microhei"


def test_the_first_cjk_font_of_the_stack_is_installed_where_fontconfig_is():
    if shutil.which("fc-list") is None:  # no fontconfig: Chromium's fonts come from elsewhere (macOS, Windows)
        return
    installed = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=True).stdout
    names = [f.strip('"') for f in CJK_FONTS]
    assert any(name in installed for name in names), f"none of {names} among the installed CJK fonts: {installed!r}"
