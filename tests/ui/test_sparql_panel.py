"""The Ask page's SPARQL form, Explore, Replay and Compare against a real Oxigraph server."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from conftest import APP
from kgqa_ui.run_store import RunStore

TIMEOUT = 120


def _plain(value: str) -> str:
    """An element's text with the markdown escapes (md_text) removed."""
    return re.sub(r"\\(.)", r"\1", value)


def _triples() -> int:
    from tests.graph.sparql_data import freebase

    return freebase()[0].count(" .\n")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    from tests.graph.sparql_data import freebase, oxigraph_serving

    with oxigraph_serving(tmp_path_factory.mktemp("sparql-ui"), "films", freebase()[0]) as (endpoint, _):
        yield endpoint


def _connect(at: AppTest, url: str, button: str = "sparql_connect") -> AppTest:
    at.segmented_control(key="ask_source").set_value("SPARQL endpoint").run()
    at.text_input(key="sparql_url").set_value(url)
    at.selectbox(key="sparql_dialect").set_value("freebase").run()
    at.button(key=button).click().run()
    return at


def test_connection_test_reports_the_triple_count_or_the_error(runs_dir, endpoint):
    at = _connect(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), endpoint, "sparql_test")
    assert not at.exception
    assert any(f"connected: {_triples()} triples" in _plain(s.value) for s in at.success), [s.value for s in at.success]
    assert not hasattr(at.session_state["graph"], "endpoint"), "a test does not replace the loaded graph"
    bad = endpoint.replace("/query", "/nothing-here")
    at.text_input(key="sparql_url").set_value(bad).run()
    at.button(key="sparql_test").click().run()
    assert not at.exception and any("HTTP 404" in _plain(e.value) for e in at.error), [e.value for e in at.error]
    at.text_input(key="sparql_url").set_value("not a url").run()
    at.button(key="sparql_test").click().run()
    assert any("is not an http" in _plain(e.value) for e in at.error)


def test_connect_link_explore_run_replay_and_compare(runs_dir, endpoint, monkeypatch):
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _connect(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), endpoint)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["graph"].endpoint == endpoint
    assert any("Connected to" in _plain(s.value) and f"{_triples()} triples" in _plain(s.value) for s in at.success)
    at.text_area(key="ask_question").set_value("Who directed The Matrix?").run()
    assert at.multiselect(key="ask_topics").value == ["The Matrix"]
    at.multiselect(key="ask_methods").set_value(["direct"])
    at.run()
    from test_app import _run_and_wait

    _run_and_wait(at, timeout=900)
    assert not at.exception, [e.value for e in at.exception]
    runs = RunStore(runs_dir).list()
    assert len(runs) == 1 and runs[0].has_graph, "the fetched subgraph is saved with the run"
    trace = RunStore(runs_dir).load(runs[0].run_id)
    assert trace.graph_queries > 0 and trace.extra["graph_store"]["endpoint"] == endpoint
    snapshot = RunStore(runs_dir).load_graph(trace.graph_fingerprint)
    assert snapshot is not None and snapshot.find("The Matrix", "film.film.directed_by", "Lana Wachowski")

    # Explore: search asks the endpoint, expanding fetches a neighbourhood
    at.switch_page("pages/explore.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.text_input(key="explore_q").set_value("Speed").run()
    assert at.selectbox(key="explore_pick").value == "Speed"
    at.button(key="explore_expand").click().run()
    assert not at.exception and "Speed" in at.session_state["explore_expanded"]
    mirror = at.session_state["sparql_mirror"]
    assert mirror.find("Speed", "film.film.directed_by", "Jan de Bont") is not None
    assert any("fetched so far" in _plain(c.value) for c in at.caption)

    # Replay and Compare read the saved run: no endpoint needed
    at.switch_page("pages/replay.py")
    at.query_params["run"] = runs[0].run_id
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.switch_page("pages/replay.py")
    fresh.query_params["run"] = runs[0].run_id
    fresh.run()
    assert not fresh.exception and not fresh.error
    drawn = [el.proto.srcdoc for el in fresh.get("iframe")]
    assert any("The Matrix" in d for d in drawn), "the replay draws the fetched subgraph"
    cmp_page = AppTest.from_file(APP, default_timeout=TIMEOUT)
    cmp_page.switch_page("pages/compare.py").run()
    assert not cmp_page.exception and not cmp_page.error
