#!/usr/bin/env sh
# The message catalogs (gettext, built with Babel): locales/<language>/LC_MESSAGES/messages.po.
#   sh tools/i18n.sh extract [FILE.pot]  every marked text into a template (default: a temporary file; prints its path)
#   sh tools/i18n.sh update              extract, then merge the template into every language's .po
#                                        (new texts arrive with an empty translation; removed ones go)
#   sh tools/i18n.sh compile             check that every .po compiles, with statistics (writes .mo files,
#                                        which git ignores: the app compiles the .po in memory, viz/i18n_text.py)
#   sh tools/i18n.sh init LANGUAGE       a catalog for a new language
# `make messages` runs update. tests/ui/test_i18n.py fails while a marked text is missing from a
# catalog or has no translation.
set -eu
cd "$(dirname "$0")/.."
PYBABEL=${PYBABEL:-.venv/bin/pybabel}
SOURCES="app.py pages ui viz models"

extract() {
  # --add-location=file: file names help a translator; line numbers would change the .po on every edit.
  # shellcheck disable=SC2086
  "$PYBABEL" -q extract -F babel.cfg -k Page:2 --add-location=file --sort-by-file -c Translators: \
    --project="Attention Lab" --width=100 -o "$1" $SOURCES
}

command=${1:-}
case "$command" in
  extract)
    out=${2:-$(mktemp --suffix=.pot)}
    extract "$out"
    echo "$out"
    ;;
  update)
    pot=$(mktemp --suffix=.pot)
    extract "$pot"
    "$PYBABEL" -q update -i "$pot" -d locales -D messages --no-fuzzy-matching --ignore-obsolete --width=100
    rm -f "$pot"
    ;;
  compile)
    "$PYBABEL" compile -d locales -D messages --statistics
    ;;
  init)
    language=${2:?"init needs a language code, e.g. ja"}
    pot=$(mktemp --suffix=.pot)
    extract "$pot"
    "$PYBABEL" init -i "$pot" -d locales -D messages -l "$language" --width=100
    rm -f "$pot"
    ;;
  *)
    echo "usage: sh tools/i18n.sh extract [FILE.pot] | update | compile | init LANGUAGE" >&2
    exit 2
    ;;
esac
