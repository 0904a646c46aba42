#!/usr/bin/env sh
# Prints the path of a Chromium/Chrome for the browser tests and image export, finding or
# installing one in this order: $BROWSER_PATH; an installed chromium/chrome; as root, the
# Debian package `chromium`; else Playwright's own download. Says on stderr which was used.
# Chinese in the figures (the pages, and PNG/SVG/PDF exports) needs a CJK font, or Chromium draws
# boxes: when fontconfig knows none, it installs Debian's fonts-wqy-microhei (5 MB) as root, with
# chromium or beside one already there (viz/fonts.py names it in the figures' font stack).
set -eu
PY=${PY:-.venv/bin/python}
CJK_FONT_PACKAGE=fonts-wqy-microhei
say() { echo "chromium: $*" >&2; }

has_cjk_font() {
  command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh family 2>/dev/null)" ]
}

ensure_cjk_font() {
  if has_cjk_font; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "no CJK font: installing the Debian package $CJK_FONT_PACKAGE (apt-get)"
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$CJK_FONT_PACKAGE") >&2; then
      return 0
    fi
  fi
  say "no CJK font (fc-list :lang=zh finds none): Chinese in figures shows as boxes; install $CJK_FONT_PACKAGE or fonts-noto-cjk"
}

found() { ensure_cjk_font; echo "$1"; exit 0; }

if [ -n "${BROWSER_PATH:-}" ]; then
  if [ -x "$BROWSER_PATH" ]; then say "using \$BROWSER_PATH=$BROWSER_PATH"; found "$BROWSER_PATH"; fi
  say "\$BROWSER_PATH=$BROWSER_PATH is not an executable; looking elsewhere"
fi
for name in chromium chromium-browser google-chrome google-chrome-stable; do
  if path=$(command -v "$name" 2>/dev/null); then say "using installed $name at $path"; found "$path"; fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "installing the Debian packages chromium and $CJK_FONT_PACKAGE (apt-get)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core \
    "$CJK_FONT_PACKAGE") >&2
  if path=$(command -v chromium 2>/dev/null); then say "using Debian chromium at $path"; found "$path"; fi
fi
say "falling back to: python -m playwright install chromium"
"$PY" -m playwright install chromium >&2
path=$("$PY" -c 'from playwright.sync_api import sync_playwright
with sync_playwright() as p: print(p.chromium.executable_path)')
say "using Playwright's chromium at $path"
found "$path"
