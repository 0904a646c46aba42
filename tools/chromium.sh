#!/usr/bin/env sh
# Prints the path of a Chromium/Chrome for the browser tests and image export, finding or
# installing one in this order: $BROWSER_PATH; an installed chromium/chrome; as root, the
# Debian package `chromium`; else Playwright's own download. Says on stderr which was used.
set -eu
PY=${PY:-.venv/bin/python}
say() { echo "chromium: $*" >&2; }

if [ -n "${BROWSER_PATH:-}" ]; then
  if [ -x "$BROWSER_PATH" ]; then say "using \$BROWSER_PATH=$BROWSER_PATH"; echo "$BROWSER_PATH"; exit 0; fi
  say "\$BROWSER_PATH=$BROWSER_PATH is not an executable; looking elsewhere"
fi
for name in chromium chromium-browser google-chrome google-chrome-stable; do
  if path=$(command -v "$name" 2>/dev/null); then say "using installed $name at $path"; echo "$path"; exit 0; fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "installing the Debian package chromium (apt-get)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core) >&2
  if path=$(command -v chromium 2>/dev/null); then say "using Debian chromium at $path"; echo "$path"; exit 0; fi
fi
say "falling back to: python -m playwright install chromium"
"$PY" -m playwright install chromium >&2
path=$("$PY" -c 'from playwright.sync_api import sync_playwright
with sync_playwright() as p: print(p.chromium.executable_path)')
say "using Playwright's chromium at $path"
echo "$path"
