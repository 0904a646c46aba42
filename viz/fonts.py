"""The figures' font stack, so that Chinese (and any CJK) text is drawn as glyphs, not boxes.

The app's Latin font comes first; for a character it lacks, Chromium (the page's browser, and
kaleido's for PNG/SVG/PDF exports) tries the next family in the list. WenQuanYi Micro Hei is
Debian's 5 MB `fonts-wqy-microhei`, which tools/chromium.sh installs beside Chromium; Noto Sans
CJK SC is `fonts-noto-cjk` (91 MB); the last two are the usual macOS and Windows ones, for a
browser showing the app there. Without any of them the text falls to `sans-serif`, which on a
machine without a CJK font draws boxes.
"""

# The smallest text any figure draws (ticks, legends, hover, colour bars): readable on a projector and a
# phone (tests/viz/test_readability.py checks every figure).
TEXT_PX = 15
LATIN_FONT = '"Source Sans"'  # Streamlit's own font: what the charts used before CJK fonts were named
CJK_FONTS = ('"WenQuanYi Micro Hei"', '"Noto Sans CJK SC"', '"PingFang SC"', '"Microsoft YaHei"')
FONT_FAMILY = ", ".join((LATIN_FONT, *CJK_FONTS, "sans-serif"))
# A PDF's embedded fonts are named in its /BaseFont entries; a CJK font from the list above shows
# as one of these (subset prefixes such as ABCDEF+ come before them).
CJK_BASE_FONT_NAMES = (b"WenQuanYi", b"NotoSansCJK", b"PingFang", b"MicrosoftYaHei")
