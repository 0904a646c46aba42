"""Links from a head's top inputs to the single-input pages, with that text, layer and head selected.

ui/links.py binds the pages' controls to the URL (their keys are the parameters' names) but has no
helper that builds another page's URL, so the address is built here with urllib: the page's path
(models/pages.py), then the text, layer and head under the keys those pages bind. Texts longer
than ui.links.LINK_TEXT_MAX characters are not taken by the page from a link, so such a text is cut there.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from models.pages import LANGUAGE_MODEL, SELF_ATTENTION
from ui.links import LINK_TEXT_MAX

# mechanism -> (page, text key, layer key, head key), as pages/self_attention.py and language_model.py bind them
TARGETS = {
    "transformer": (SELF_ATTENTION, "sa_text", "sa_layer", "sa_head"),
    "lm": (LANGUAGE_MODEL, "lm_text", "lm_layer", "lm_head"),
}


def single_input_url(mechanism: str, text: str, layer: int, head: int, language: str | None = None) -> str:
    """Returns the relative URL of the single-input page of a mechanism ("transformer" or "lm") opened on
    `text` (cut to LINK_TEXT_MAX characters) with `layer` and `head` selected; `language`: a lang parameter."""
    page, text_key, layer_key, head_key = TARGETS[mechanism]
    params = {text_key: text[:LINK_TEXT_MAX], layer_key: int(layer), head_key: int(head)}
    if language:
        params["lang"] = language
    return f"{page.url_path}?{urlencode(params, quote_via=quote)}"
