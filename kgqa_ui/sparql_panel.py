"""The Ask page's "Connect to a SPARQL endpoint" form, and what other pages need for a store.

A connected store becomes the session's active graph (a `SparqlGraphStore`);
runs on it fetch each question's neighbourhood and save that subgraph with
the trace, so Replay and Compare never need the endpoint again.  Explore
works on a `StoreMirror`: the part of the store the user has expanded.
Every text from the endpoint (URLs, error messages, names) is shown escaped.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from kgqa_core.graph.mirror import StoreMirror
from kgqa_core.graph.sparql import DIALECTS, SparqlError, connection_test
from kgqa_core.graph.sparql.options import SparqlSource
from kgqa_core.graph.store import is_local_graph

from . import state
from .html_utils import md_text as _md


def endpoint_form() -> None:
    """URL, dialect, optional default graph and language; Test connection and Connect buttons."""
    url = st.text_input("SPARQL endpoint URL", key="sparql_url",
                        placeholder="http://localhost:8890/sparql",
                        help="A SPARQL 1.1 query endpoint (Virtuoso, QLever, Oxigraph, Blazegraph, ...).")
    c = st.columns([2, 3, 1])
    dialect = c[0].selectbox("Dialect", list(DIALECTS), key="sparql_dialect",
                             format_func=lambda d: DIALECTS[d].title,
                             help="How the store names entities and which edges are facts.")
    default_graph = c[1].text_input("Default graph IRI (optional)", key="sparql_graph",
                                    help="Sent as default-graph-uri; leave empty for the store's default.")
    language = c[2].text_input("Label language", value="en", key="sparql_language")
    with st.expander("Fetch limits"):
        l = st.columns(4)
        hops = l[0].number_input("Hops", 1, 5, 3, key="sparql_hops",
                                 help="Hops fetched around a question's topic entities.")
        per_entity = l[1].number_input("Triplets per entity", 10, 10000, 200, step=10, key="sparql_limit",
                                       help="A hub with more is cut (and the trace says so).")
        max_triplets = l[2].number_input("Max triplets per question", 100, 200000, 5000, step=100,
                                         key="sparql_max")
        timeout = l[3].number_input("Query timeout (s)", 1, 600, 30, key="sparql_timeout")
    b = st.columns(2)
    test = b[0].button("Test connection", key="sparql_test", icon=":material/network_check:", disabled=not url)
    connect = b[1].button("Connect", key="sparql_connect", type="primary", icon=":material/link:", disabled=not url)
    if not (test or connect):
        report = st.session_state.get("sparql_report")
        if report:
            (st.success if report[0] else st.error)(_md(report[1]))
        return
    try:
        source = SparqlSource(url.strip(), dialect, default_graph.strip() or None, language.strip() or "en",
                              float(timeout), int(hops), int(per_entity), int(max_triplets))
    except ValueError as exc:
        st.session_state["sparql_report"] = (False, str(exc))
        st.error(_md(exc), icon=":material/error:")
        return
    with st.spinner("Asking the endpoint for its triple count…"):
        report = connection_test(source.endpoint, source.default_graph, timeout=min(source.timeout, 30.0))
    st.session_state["sparql_report"] = (report.ok, report.message)
    if not report.ok:
        st.error(_md(report.message), icon=":material/error:")
        return
    if test:
        st.success(_md(f"{report.message} ({report.seconds:.2f} s)"), icon=":material/check_circle:")
        return
    store = source.open()
    state.set_graph(store, f"SPARQL: {source.endpoint}")
    st.session_state["sparql_source"] = source.to_dict()  # a reload reconnects with the same settings
    st.session_state["graph_sample"] = None
    st.session_state["sparql_triples"] = report.triples
    for key in ("ask_question", "ask_topics", "ask_example", "ask_linked_for"):
        st.session_state.pop(key, None)


def is_store(graph: Any) -> bool:
    return graph is not None and not is_local_graph(graph)


def store_summary(store: Any) -> None:
    """The connected store: endpoint, dialect, triple count and the queries sent so far."""
    n = st.session_state.get("sparql_triples")
    count = f"{n:,} triples" if isinstance(n, int) else "triple count unknown"
    st.success(_md(f"Connected to {store.endpoint} ({store.dialect.title}): {count}. Each question fetches its "
                   f"{store.hops}-hop neighbourhood (at most {store.limit_per_entity} triplets per entity, "
                   f"{store.max_triplets} per question)."), icon=":material/cloud:")
    costs = store.costs
    if costs.queries:
        st.caption(_md(f"{costs.queries} queries so far, {costs.seconds:.2f} s; cache hits {costs.cache_hits}, "
                       f"misses {costs.cache_misses}"))


def sidebar_caption(store: Any) -> None:
    st.caption(_md(f"Graph: SPARQL endpoint {store.endpoint} ({store.dialect.name})"))


def link_candidates(question: str, graph: Any, limit: int = 10) -> list:
    """Topic-entity candidates: the upload's linker, or exact label lookups in a store."""
    if is_store(graph):
        from kgqa_core.graph.store_linking import link_in_store

        try:
            return link_in_store(question, graph, limit=limit)
        except SparqlError as exc:
            st.error(_md(f"Linking in the store failed: {exc}"), icon=":material/error:")
            return []
    from kgqa_core.graph.linking import link_entities

    return link_entities(question, graph, limit=limit)


def explorer_graph(graph: Any) -> Any:
    """What Explore draws: the graph itself, or for a store the (session-kept) mirror of its explored part."""
    if not is_store(graph):
        return graph
    mirror = st.session_state.get("sparql_mirror")
    if mirror is None or mirror.store is not graph:
        mirror = StoreMirror(graph)
        st.session_state["sparql_mirror"] = mirror
    return mirror


def explorer_caption(graph: Any) -> None:
    if isinstance(graph, StoreMirror):
        cut = f"; {len(graph.cut)} hub(s) cut at {graph.limit} triplets" if graph.cut else ""
        st.caption(_md(f"A SPARQL store: search asks the endpoint, and each expanded entity's neighbourhood is "
                       f"fetched on demand. Counts and charts describe the {len(graph):,} triplets fetched so "
                       f"far{cut}."))
