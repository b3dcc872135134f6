"""Loader rules for inputs that used to merge, drop or hang: literals vs IRIs, languages, blank nodes,
NaN in JSON, line separators inside names, devices and FIFOs."""

from __future__ import annotations

import os
import threading

import pytest

from kgqa_core.graph import GraphFormatError, KnowledgeGraph, load_graph, parse_graph_bytes


def triples(graph: KnowledgeGraph) -> set[tuple[str, str, str]]:
    return {t.as_tuple for t in graph}


def test_a_literal_never_merges_with_an_iri_of_the_same_text():
    data = b"""@prefix ex: <http://ex.org/> .
ex:alice ex:lives_in ex:Paris .
ex:bob ex:nickname "Paris" .
ex:Paris ex:in ex:France .
"""
    g = parse_graph_bytes(data, "p.ttl")
    assert triples(g) == {("alice", "lives_in", "Paris"), ("bob", "nickname", '"Paris"'), ("Paris", "in", "France")}
    assert g.neighbours("Paris") and all(t.head != "bob" for t in g.neighbours("Paris"))
    assert any("written in quotes" in n for n in g.notes)


def test_language_tagged_literals_keep_the_preferred_language_and_note_the_rest():
    data = """@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:paris rdfs:label "Paris"@fr, "Paris"@en, "Parigi"@it ;
    ex:motto "Fluctuat nec mergitur"@la, "Tossed but not sunk"@en ;
    ex:nick "Lutèce"@fr, "Lutetia"@la ;
    ex:code "75" .
ex:rome rdfs:label "Roma"@it, "Rome" .
""".encode()
    g = parse_graph_bytes(data, "cities.ttl")
    assert triples(g) == {
        ("Paris", "motto", "Tossed but not sunk"),  # English kept, Latin noted
        ("Paris", "nick", "Lutèce"),  # no English: the first language A-Z (fr) kept, la noted
        ("Paris", "code", "75"),  # untagged values always kept
    }
    noted = "\n".join(g.notes)
    assert "'Fluctuat nec mergitur'@la" in noted and "'Lutetia'@la" in noted and "'Parigi'@it" in noted
    assert "'Paris'@fr" in noted
    # an untagged label beats a label in another language than the preferred one
    rome = parse_graph_bytes(data.replace(b"ex:code", b"ex:near ex:rome ; ex:code"), "c.ttl")
    assert ("Paris", "near", "Rome") in triples(rome) and "'Roma'@it" in "\n".join(rome.notes)


def test_blank_nodes_get_the_same_names_on_every_load():
    data = b"""_:a <http://ex.org/knows> _:b .
_:b <http://ex.org/knows> _:c .
_:b <http://ex.org/name> "Bo" .
_:c <http://ex.org/age> "3" .
<http://ex.org/x> <http://ex.org/owns> _:a .
"""
    first = parse_graph_bytes(data, "b.nt")
    again = parse_graph_bytes(data, "b.nt")
    reordered = parse_graph_bytes(b"\n".join(reversed(data.strip().split(b"\n"))) + b"\n", "b.nt")
    assert first.fingerprint == again.fingerprint == reordered.fingerprint
    assert [t.as_tuple for t in first] == [t.as_tuple for t in again]
    assert len(first.entities) == 6  # x, three blank nodes, "Bo", "3"
    assert all(e.startswith("_:") for e in first.entities if e not in {"x", "Bo", "3"})


@pytest.mark.parametrize("content,problem", [
    (b'[["a", "r", NaN]]', "NaN"),
    (b'[["a", "r", Infinity]]', "Infinity"),
    (b'[["a", "r", -Infinity]]', "Infinity"),
    (b'[["a", "r", 1e999]]', "too large"),
])
def test_nan_and_infinity_in_json_are_refused(content, problem):
    with pytest.raises(GraphFormatError, match=problem):
        parse_graph_bytes(content, "g.json")
    with pytest.raises(GraphFormatError, match=problem) as err:
        parse_graph_bytes(b'["x", "r", "y"]\n' + content[1:-1] + b"\n", "g.jsonl")
    assert err.value.line == 2
    assert triples(parse_graph_bytes(b'[["a", "r", "NaN"]]', "g.json")) == {("a", "r", "NaN")}


def test_line_separators_inside_names_keep_lines_whole():
    tsv = "a\u2028b\tr\tc\x0cd\ne\tr\tf\x85g\nbad line\n".encode()
    with pytest.raises(GraphFormatError) as err:
        parse_graph_bytes(tsv, "g.tsv")
    assert err.value.line == 3 and err.value.bad_lines == 1
    g = parse_graph_bytes(tsv.rsplit(b"bad", 1)[0], "g.tsv")
    assert triples(g) == {("a\u2028b", "r", "c\x0cd"), ("e", "r", "f\x85g")}
    jsonl = '["a\u2028b", "r", "c"]\n["d", "r", "e\u2029"]\n'.encode()
    assert len(parse_graph_bytes(jsonl, "g.jsonl")) == 2
    lin = "a\u2028b -> r -> c | d -> r -> e".encode()
    assert len(parse_graph_bytes(lin, "g.dog")) == 2


def test_deeply_nested_json_is_a_one_line_error():
    for name, data in (("g.json", b"[" * 100_000 + b"]" * 100_000), ("g.jsonl", b"[" * 100_000 + b"\n"),
                       ("g.txt", b"[" * 4000)):
        with pytest.raises(GraphFormatError) as err:
            parse_graph_bytes(data, name)
        assert "\n" not in str(err.value) and name in str(err.value)


def test_devices_and_fifos_are_refused_before_reading(tmp_path):
    with pytest.raises(GraphFormatError, match="a device"):
        load_graph("/dev/zero")
    fifo = tmp_path / "graph.tsv"
    os.mkfifo(fifo)
    result: list = []

    def load() -> None:
        try:
            load_graph(fifo)
        except GraphFormatError as exc:
            result.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=10)
    if worker.is_alive():  # unblock the reader so the test process can exit
        with open(fifo, "wb"):
            pass
        pytest.fail("loading a FIFO blocked")
    assert result and "FIFO" in str(result[0])
