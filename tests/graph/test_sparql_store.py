"""SparqlGraphStore against a real Oxigraph server on loopback, and its failure modes."""

from __future__ import annotations

import http.server
import threading
import time

import pytest

from kgqa_core.graph import KnowledgeGraph, load_graph
from kgqa_core.graph.sparql import (SparqlError, SparqlGraphStore, SparqlTimeout, SparqlTruncated,
                                    SparqlUnreachable, connection_test)
from kgqa_core.graph.sparql.local_server import free_port
from kgqa_core.graph.sparql.terms import UnwritableTermError, iri, literal
from kgqa_core.graph.store import GraphStore
from kgqa_core.graph.store_linking import link_in_store

from .sparql_data import INJECTION, UNICODE, freebase, wikidata


# ------------------------------------------------------------------ escaping
def test_literal_escaping_keeps_an_injection_one_string():
    text = literal(INJECTION)
    assert text == '"x\\" } DROP ALL ; INSERT DATA { <a:b> <a:b> \\"c\\" } #"'
    assert literal("a\nb\\", lang="en") == '"a\\nb\\\\"@en'
    with pytest.raises(UnwritableTermError):
        literal("x", lang='en" } DROP')


def test_iri_refuses_characters_that_would_end_it():
    assert iri("http://example.org/a") == "<http://example.org/a>"
    for bad in ("http://x/a> } DROP ALL #", "http://x/a b", 'http://x/"', ""):
        with pytest.raises(UnwritableTermError):
            iri(bad)


# ------------------------------------------------------------------ dialects on a real server
def test_freebase_cvt_nodes_collapse_into_two_hop_triplets(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase")
    assert isinstance(store, GraphStore) and not store.is_local
    hood = store.subgraph_around(["The Matrix"], hops=3)
    assert [t.as_tuple for t in hood.graph] == freebase()[1]  # canonical order, names not IRIs
    assert [t.id for t in hood.graph] == list(range(len(hood.graph)))
    assert not hood.truncated and not hood.notes
    # a chain passes through the mediator: Matrix -> starring/actor -> Keanu -> ... -> Speed
    keanu = store.neighbours_batch(["Keanu Reeves"], "in").triplets["Keanu Reeves"]
    assert {t.head for t in keanu} == {"The Matrix", "Speed"}
    assert all(not t.head.startswith("m.c") and not t.tail.startswith("m.c") for t in hood.graph)


def test_wikidata_keeps_truthy_statements_and_labels_in_the_chosen_language(oxigraph_endpoints):
    en = SparqlGraphStore(oxigraph_endpoints["wikidata"], "wikidata", language="en")
    assert sorted(t.as_tuple for t in en.subgraph_around(["Douglas Adams"], hops=3).graph) == wikidata()[1]
    de = SparqlGraphStore(oxigraph_endpoints["wikidata"], "wikidata", language="de")
    out = de.neighbours_batch(["Douglas Adams"], "in").triplets["Douglas Adams"]
    assert ("Per Anhalter durch die Galaxis", "Autor", "Douglas Adams") in [t.as_tuple for t in out]
    assert en.has_entity("Q1") and en.lookup_names(["Q1"]) == {"Q1": "Douglas Adams"}


def test_rdf_dialect_names_things_as_the_ntriples_loader_does(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["rdf"], "rdf")
    uploaded = load_graph(oxigraph_endpoints["_files"]["rdf"])
    fetched = store.subgraph_around(["Alice"], hops=4).graph
    assert sorted(t.as_tuple for t in fetched) == sorted(t.as_tuple for t in uploaded)
    assert fetched.fingerprint == uploaded.fingerprint


def test_injection_and_unicode_names_round_trip(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["wikidata"], "wikidata")
    assert store.has_entity(INJECTION) and store.has_entity(UNICODE)
    out = store.neighbours_batch([INJECTION, UNICODE, 'nobody" } #'], "both")
    assert {t.as_tuple for t in out.triplets[INJECTION]} == {
        (INJECTION, "influenced by", "Douglas Adams"), (UNICODE, "influenced by", INJECTION)}
    assert out.triplets['nobody" } #'] == []
    # the read-only server still holds every triple (nothing was dropped or inserted)
    assert connection_test(oxigraph_endpoints["wikidata"]).triples == wikidata()[0].count(" .\n")
    assert [n for n, _ in store.search_entities("DROP ALL")] == [INJECTION]


def test_limit_cuts_a_hub_and_says_so(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase")
    batch = store.neighbours_batch(["The Matrix", "Speed", "Neo"], "both", limit=2)
    assert batch.truncated == {"The Matrix", "Speed"}
    assert len(batch.triplets["The Matrix"]) == 2 and len(batch.triplets["Neo"]) == 1
    hood = store.subgraph_around(["The Matrix"], hops=2, limit_per_entity=2)
    assert hood.truncated and "more than 2 triplets" in hood.notes[0]
    capped = store.subgraph_around(["The Matrix"], hops=3, max_triplets=4)
    assert len(capped.graph) == 4 and any("cut at 4 triplets" in n for n in capped.notes)
    # the in-memory graph flags the same cut
    kg = KnowledgeGraph.from_triplets(freebase()[1])
    assert kg.neighbours_batch(["The Matrix", "Neo"], limit=2).truncated == {"The Matrix"}


def test_relation_filter_direction_cache_and_costs(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase")
    out = store.neighbours_batch(["Speed"], "out", ["film.film.directed_by"]).triplets["Speed"]
    assert [t.as_tuple for t in out] == [("Speed", "film.film.directed_by", "Jan de Bont")]
    assert store.neighbours_batch(["Speed"], "in").triplets["Speed"] == []
    queries = store.costs.queries
    again = store.neighbours_batch(["Speed"], "out").triplets["Speed"]
    assert store.costs.queries == queries and store.cache_hits >= 1  # served from the LRU cache
    assert [t.id for t in again] == [t.id for t in store.neighbours_batch(["Speed"], "out").triplets["Speed"]]
    assert store.relations_of(["Speed"], "out")["Speed"] == [
        "film.film.directed_by", "film.film.genre", "film.film.starring / film.performance.actor"]


def test_linking_in_a_store_by_exact_labels(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase")
    assert link_in_store("who directed the matrix?", store)[0].entity == "The Matrix"
    assert link_in_store("Which films did [Keanu Reeves] act in?", store)[0].entity == "Keanu Reeves"
    assert link_in_store("what is the weather", store) == []


def test_concurrent_sessions_agree(oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase")
    results: list[list[tuple]] = []

    def work():
        results.append([t.as_tuple for t in store.subgraph_around(["Speed"], hops=3).graph])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(results) == 4 and all(r == results[0] for r in results) and len(results[0]) == 9


# ------------------------------------------------------------------ failures
class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "500"

    def do_POST(self):  # noqa: N802
        if self.mode == "slow":
            time.sleep(3)
        if self.mode == "silent-cap":  # counts 5 edges, returns 1 row: a cap without any header
            import urllib.parse

            length = int(self.headers.get("Content-Length", 0))
            query = urllib.parse.parse_qs(self.rfile.read(length).decode())["query"][0]
            if "COUNT(?x)" in query:  # the label lookup
                cells = '{"e":{"type":"uri","value":"http://x/a"},"l":{"type":"literal","value":"Alice"}}'
            elif "COUNT(*)" in query:
                cells = '{"e":{"type":"uri","value":"http://x/a"},"n":{"type":"literal","value":"5"}}'
            elif "?lp ?l" in query:
                cells = ""
            else:
                cells = ('{"e":{"type":"uri","value":"http://x/a"},"p":{"type":"uri","value":"http://x/p"},'
                         '"x":{"type":"uri","value":"http://x/b"}}')
            body = ('{"head":{"vars":[]},"results":{"bindings":[' + cells + ']}}').encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.end_headers()
            self.wfile.write(body)
            return
        if self.mode == "anytime":
            body = b'{"head":{"vars":["n"]},"results":{"bindings":[]}}'
            self.send_response(206)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("X-SQL-State", "S1TAT")
            self.end_headers()
            self.wfile.write(body)
            return
        if self.mode == "capped":
            body = (b'{"head":{"vars":["n"]},"results":{"bindings":[{"n":{"type":"literal","value":"3"}}]}}')
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("X-SPARQL-MaxRows", "10000")
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(500, "Internal Server Error")
        self.end_headers()
        self.wfile.write(b"Virtuoso 42000 Error SR186: the store is on fire\n")

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_server():
    servers = []

    def start(mode: str) -> str:
        handler = type("H", (_Handler,), {"mode": mode})
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/sparql"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def test_http_500_is_a_clear_error(fake_server):
    store = SparqlGraphStore(fake_server("500"), "rdf", timeout=5)
    with pytest.raises(SparqlError, match="HTTP 500.*on fire"):
        store.has_entity("Alice")
    report = connection_test(store.endpoint)
    assert not report.ok and "HTTP 500" in report.message


def test_timeout_never_hangs(fake_server):
    store = SparqlGraphStore(fake_server("slow"), "rdf", timeout=0.5)
    t0 = time.perf_counter()
    with pytest.raises(SparqlTimeout, match="did not answer within 0.5 s"):
        store.neighbours_batch(["Alice"])
    assert time.perf_counter() - t0 < 2.5


def test_a_partial_result_is_refused(fake_server):
    store = SparqlGraphStore(fake_server("capped"), "rdf", timeout=5)
    with pytest.raises(SparqlTruncated, match="partial result.*row cap 10000"):
        store.count_triples()
    anytime = SparqlGraphStore(fake_server("anytime"), "rdf", timeout=5)
    with pytest.raises(SparqlTruncated, match="anytime query"):
        anytime.neighbours_batch(["Alice"])


def test_a_batch_shorter_than_its_count_is_refused(fake_server):
    store = SparqlGraphStore(fake_server("silent-cap"), "rdf", timeout=5)
    with pytest.raises(SparqlTruncated, match="returned 1 rows where it counted 5"):
        store.neighbours_batch(["Alice"], "out")


def test_unreachable_endpoint_and_bad_urls():
    url = f"http://127.0.0.1:{free_port()}/query"  # nothing listens there
    with pytest.raises(SparqlUnreachable, match="cannot reach"):
        SparqlGraphStore(url, "rdf", timeout=2).has_entity("Alice")
    assert "cannot reach" in connection_test(url, timeout=2).message
    with pytest.raises(SparqlError, match="not an http"):
        SparqlGraphStore("file:///etc/passwd")
    with pytest.raises(ValueError, match="unknown SPARQL dialect"):
        SparqlGraphStore("http://127.0.0.1:1/q", "dbpedia")


# ------------------------------------------------------------------ the in-memory implementation
def test_in_memory_graph_answers_the_store_interface():
    kg = KnowledgeGraph.from_triplets([("b", "r", "a"), ("a", "s", "c"), ("a", "r", "d"), ("c", "t", "e"), ("x", "r", "y")])
    assert isinstance(kg, GraphStore) and kg.is_local
    out = kg.neighbours_batch(["a", "zz"], "out")
    assert [t.as_tuple for t in out.triplets["a"]] == [("a", "r", "d"), ("a", "s", "c")] and out.triplets["zz"] == []
    assert [t.as_tuple for t in kg.neighbours_batch(["a"], "in").triplets["a"]] == [("b", "r", "a")]
    only_r = kg.neighbours_batch(["a"], "both", ["r"])
    assert {t.relation for t in only_r.triplets["a"]} == {"r"} and not only_r.truncated
    assert kg.relations_of(["a"]) == {"a": ["r", "s"]}
    hood = kg.subgraph_around(["a"], hops=1)
    assert [t.as_tuple for t in hood.graph] == [("a", "r", "d"), ("a", "s", "c"), ("b", "r", "a")]
    assert [t.as_tuple for t in kg.subgraph_around(["a"], hops=2).graph][-1] == ("c", "t", "e")
    assert ("x", "r", "y") not in {t.as_tuple for t in kg.subgraph_around(["a"], hops=5).graph}
