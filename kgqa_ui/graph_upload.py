"""One graph upload box for every page: the same size limit, the same parser bound, errors shown as text.

Ask and Evaluate both take a graph file.  The limit (`state.upload_limit_mb`,
``KGQA_MAX_UPLOAD_MB``) is given to Streamlit's uploader and to the parser,
which applies it to the decompressed text as well, so a small ``.gz`` that
inflates past it is refused while it inflates (a 2 MB bomb never becomes
hundreds of MB).  The file's name and content are the user's: error messages
carry them through `md_text`.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph

from . import state
from .html_utils import md_text

ACCEPTED = ["tsv", "csv", "txt", "json", "jsonl", "nt", "ttl", "gz"]


def graph_uploader(label: str, key: str) -> Any:
    """A file uploader for graphs, limited to the app's upload limit (the uploaded file, or None)."""
    limit = state.upload_limit_mb()
    return st.file_uploader(
        f"{label} (up to {limit:g} MB)", type=ACCEPTED, key=key, max_upload_size=max(1, math.ceil(limit)),
        help=f"TSV/CSV (head, relation, tail), JSON, JSONL, N-Triples, Turtle or DoG's 'h -> r -> t | ...' form; "
             f"optionally gzipped. The limit is {limit:g} MB per file, also once decompressed; set "
             "KGQA_MAX_UPLOAD_MB to change it.")


def parse_upload(up: Any) -> tuple[KnowledgeGraph | None, str | None]:
    """The uploaded graph, or None and the error as escaped Markdown (names the file, never renders it)."""
    from kgqa_core.graph.loaders import GraphFormatError, parse_graph_bytes

    limit = state.upload_limit_mb()
    if up.size > limit * 1024 * 1024:
        return None, (f"{md_text(up.name)} is {up.size / 1024 / 1024:.1f} MB; the upload limit is {limit:g} MB. "
                      "Load a smaller graph, or raise the limit with the KGQA_MAX_UPLOAD_MB environment variable.")
    try:
        with st.spinner("Parsing " + md_text(up.name) + "…"):
            return parse_graph_bytes(up.getvalue(), up.name, max_bytes=int(limit * 1024 * 1024)), None
    except GraphFormatError as exc:
        err = md_text(exc)  # file text is shown as text, never as markup
        if exc.examples:
            err += "\n\n" + "\n".join(f"- line {n}: {md_text(text[:120])}" for n, text in exc.examples[:3])
        return None, err
