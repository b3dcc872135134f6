"""Escaping for every string that reaches generated HTML or a <script> block.

Entity and relation names come from user-uploaded graphs and model output, so
they are untrusted: a graph whose entity is ``<script>alert(1)</script>`` must
show that text, never run it.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any


def esc(value: Any) -> str:
    """HTML-escape any value for element content or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def script_json(value: Any) -> str:
    """JSON that is safe to place inside ``<script>``.

    ``json.dumps`` alone leaves ``</script>`` and ``<!--`` intact, which would
    end the script element early; escaping ``<``, ``>`` and ``&`` as unicode
    escapes keeps the JSON value identical for the JavaScript parser.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


_MD_SPECIAL = frozenset("\\`*_{}[]()#+-.!|<>$~:&@=\"'^%/;?,")


def _break_autolink(match: re.Match) -> str:
    found = match.group(0)
    return {"://": ":\u2060//", "@": "\u2060@"}.get(found, found[:3] + "\u2060.")


# GFM finds literal autolinks (http://..., www...., name@host) in text *after* escapes are resolved
_AUTOLINK = re.compile(r"://|(?i:www)\.|@")


def md_text(value: Any) -> str:
    """Untrusted text for ``st.markdown``/``st.caption``/``st.info``: shown as typed, never as markup.

    CommonMark lets a backslash escape any ASCII punctuation, so escaping all
    of it turns off every construct at once: images and links
    (``![x](http://host)`` would make the browser fetch an outside address),
    code spans (a stray backtick in ``?run=``), HTML tags and entities,
    ``$math$``, Streamlit's ``:red[...]`` colours and ``:icon:`` shortcodes.
    GFM's literal autolinks are matched after escapes are resolved, so an
    invisible word joiner (U+2060) is put into ``://``, ``www.`` and ``@``
    instead.  Line breaks are kept as hard breaks.
    """
    text = _AUTOLINK.sub(_break_autolink, "" if value is None else str(value))
    out = "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in text)
    return out.replace("\r\n", "\n").replace("\n", "  \n")


def plotly_text(value: Any) -> str:
    """Untrusted text for a Plotly label, tick or hover text.

    Plotly reads a small HTML subset in every text field (``<a href>``
    becomes a link, ``<b>`` bold); escaping ``&``, ``<`` and ``>`` keeps the
    text literal (Plotly decodes the entities back for display).
    """
    return html.escape("" if value is None else str(value), quote=False)
