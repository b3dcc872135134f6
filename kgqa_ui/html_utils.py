"""Escaping for every string that reaches generated HTML or a <script> block.

Entity and relation names come from user-uploaded graphs and model output, so
they are untrusted: a graph whose entity is ``<script>alert(1)</script>`` must
show that text, never run it.
"""

from __future__ import annotations

import html
import json
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
