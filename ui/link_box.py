"""The Link box beside every Export menu, and the rule that keeps one history entry per page: the two
scripts the app runs in the browser, both constant (no user text reaches them as HTML)."""

from __future__ import annotations

import html
from collections.abc import Callable

import streamlit as st

from ui.i18n import current_language, translator

# The Link box shows the address bar, read in the browser: Streamlit writes every bound control
# and linked text into the URL, on a fragment's rerun (st.fragment) as on a full one, so the box
# is right even where the section around it did not rerun. One constant script (no user input):
# the box is filled when it is drawn, and again on every click (the Link button that opens it, the
# Copy button), focus and Back or Forward, so it shows the address as it is when it is read.
LINK_BOX_HTML = """<div class="al-link" style="display:flex;gap:.5rem;align-items:flex-start;width:24rem;max-width:80vw">
<textarea data-al-link data-al-lang="__LANG__" readonly rows="3" aria-label="__ARIA__"
 style="flex:1;resize:none;font-family:monospace;font-size:.8rem;line-height:1.3;word-break:break-all;
 padding:.35rem .5rem;border:1px solid rgba(128,128,128,.35);border-radius:.5rem;background:transparent;
 color:inherit"></textarea>
<button type="button" data-al-copy style="padding:.35rem .75rem;border:1px solid rgba(128,128,128,.35);
 border-radius:.5rem;background:transparent;color:inherit;cursor:pointer;font-size:.85rem"
 data-al-copied="__COPIED__">__COPY__</button></div>
<script>(function () {
  // The link carries the session's language (?lang=), whatever the address bar holds.
  function linkOf(box) {
    var url = new URL(window.location.href);
    if (box.dataset.alLang) url.searchParams.set("lang", box.dataset.alLang);
    return url.href;
  }
  function fill() {
    document.querySelectorAll("textarea[data-al-link]").forEach(function (box) {
      var link = linkOf(box);
      if (box.value !== link) box.value = link;
    });
  }
  if (!window.__attentionLabLinks) {
    window.__attentionLabLinks = true;
    window.addEventListener("popstate", fill);
    document.addEventListener("click", fill, true);
    document.addEventListener("click", function (event) {
      var button = event.target.closest && event.target.closest("[data-al-copy]");
      if (!button) return;
      var box = button.parentElement.querySelector("textarea[data-al-link]");
      fill();
      box.select();
      var done = function () { button.textContent = button.dataset.alCopied; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(box.value).then(done, function () { document.execCommand("copy"); done(); });
      } else {
        document.execCommand("copy");
        done();
      }
    });
    document.addEventListener("focusin", function (event) {
      if (event.target.matches && event.target.matches("textarea[data-al-link]")) { fill(); event.target.select(); }
    });
  }
  fill();
})();</script>"""


def link_box_html(language: str, gettext: Callable[[str], str]) -> str:
    """Returns the Link box's markup: the constant script, its words in `language` (from the catalog,
    escaped) and the language the link carries."""
    words = {"__LANG__": language, "__ARIA__": gettext("Link to this view"), "__COPIED__": gettext("Copied"),
             "__COPY__": gettext("Copy")}
    text = LINK_BOX_HTML
    for marker, word in words.items():
        text = text.replace(marker, html.escape(word, quote=True))
    return text


def link_box() -> None:
    """Shows a "Link" popover with this view's URL (the browser's address, with the session's language) and
    a copy button."""
    _ = translator()
    with st.popover(_("Link"), icon=":material/link:", width="content"):
        st.caption(_("This link reopens the view: the page, its text and every control."))
        st.html(link_box_html(current_language(), _), unsafe_allow_javascript=True)


# One history entry per page, as Streamlit gives a control bound to the URL (it writes its value with
# replaceState): the server's own writes into the address (a choice's id, a text, the tour's step, the
# language after a page switch) reach the browser as pushState, which made Back step through every
# control change, and after a page switch in Chinese land on the same page again (the switch pushed
# "/", the language "/?lang=zh"). A push that keeps the page's path replaces the entry instead; a push
# to another page stays a push. tests/e2e/test_links_browser.py (Back) fails without it.
HISTORY_HTML = """<script>(function () {
  if (window.__attentionLabHistory) return;
  window.__attentionLabHistory = true;
  var push = window.history.pushState.bind(window.history);
  window.history.pushState = function (state, title, url) {
    try {
      if (url != null && new URL(url, window.location.href).pathname === window.location.pathname) {
        return window.history.replaceState(state, title, url);
      }
    } catch (error) { /* a URL the browser cannot read: as asked */ }
    return push(state, title, url);
  };
})();</script>"""


def one_history_entry_per_page() -> None:
    """Installs, once per browser tab, the rule that the address's parameters change without a new history entry."""
    st.html(HISTORY_HTML, unsafe_allow_javascript=True)
