"""Graph loaders: every format, every kind of bad input, dedup and unicode."""

from __future__ import annotations

import gzip
import json

import pytest

from kgqa_core.graph import GraphFormatError, KnowledgeGraph, linearize, load_graph, parse_graph_bytes, parse_linearized


def triples(graph: KnowledgeGraph) -> set[tuple[str, str, str]]:
    return {t.as_tuple for t in graph}


# ------------------------------------------------------------------ formats
def test_tsv_with_header_and_parallel_relations(tmp_path):
    p = tmp_path / "movies.tsv"
    p.write_text(
        "head\trelation\ttail\n"
        "Larry Crowne\tdirected_by\tTom Hanks\n"
        "Larry Crowne\twritten_by\tTom Hanks\n"
        "Larry Crowne\tstarred_actors\tTom Hanks\n",
        encoding="utf-8",
    )
    g = load_graph(p)
    assert len(g) == 3  # header skipped, parallel relations between the same pair kept
    assert g.nx.number_of_edges("Larry Crowne", "Tom Hanks") == 3
    assert g.name == "movies" and g.source == str(p)
    assert {t.relation for t in g.out_triplets("Larry Crowne")} == {"directed_by", "written_by", "starred_actors"}


def test_tsv_without_header_keeps_direction(tmp_path):
    p = tmp_path / "kb.tsv"
    p.write_text("A\tr\tB\nB\tr\tA\n", encoding="utf-8")
    g = load_graph(p)
    assert triples(g) == {("A", "r", "B"), ("B", "r", "A")}
    assert g.find("A", "r", "B").id != g.find("B", "r", "A").id


def test_csv_quoted_fields_with_commas_and_quotes():
    data = (
        'head,relation,tail\n'
        '"Smith, John",knows,"O\'Brien ""Bob"""\n'
        'Now, Voyager,x,y\n'.replace("Now, Voyager,x,y", '"Now, Voyager",directed_by,Irving Rapper')
    ).encode()
    g = parse_graph_bytes(data, "people.csv")
    assert triples(g) == {
        ("Smith, John", "knows", 'O\'Brien "Bob"'),
        ("Now, Voyager", "directed_by", "Irving Rapper"),
    }


def test_json_list_of_lists_and_objects():
    data = json.dumps(
        [["Inception", "directed_by", "Christopher Nolan"], {"head": "Inception", "relation": "release_year", "tail": 2010}]
    ).encode()
    g = parse_graph_bytes(data, "g.json")
    assert triples(g) == {("Inception", "directed_by", "Christopher Nolan"), ("Inception", "release_year", "2010")}


def test_json_object_with_triplets_key():
    data = json.dumps({"triplets": [["a", "r", "b"]]}).encode()
    assert triples(parse_graph_bytes(data, "g.json")) == {("a", "r", "b")}


def test_jsonl():
    data = b'["a", "r", "b"]\n\n{"head": "c", "relation": "r", "tail": "d"}\n'
    assert triples(parse_graph_bytes(data, "g.jsonl")) == {("a", "r", "b"), ("c", "r", "d")}


def test_ntriples_labels_local_names_and_literals():
    data = (
        b"<http://ex.org/p/Ada_Lovelace> <http://www.w3.org/2000/01/rdf-schema#label> \"Ada Lovelace\"@en .\n"
        b"<http://ex.org/p/Ada_Lovelace> <http://ex.org/v#collaborator> <http://ex.org/p/Charles_Babbage> .\n"
        b"<http://ex.org/p/Ada_Lovelace> <http://ex.org/v#born> \"1815\"^^<http://www.w3.org/2001/XMLSchema#gYear> .\n"
    )
    g = parse_graph_bytes(data, "people.nt")
    # label used for the named entity, IRI local name otherwise, literal as its lexical value
    assert triples(g) == {("Ada Lovelace", "collaborator", "Charles_Babbage"), ("Ada Lovelace", "born", "1815")}


def test_turtle_prefers_english_label():
    data = """@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:earth rdfs:label "Erde"@de, "Earth"@en ; ex:orbits ex:sun .
ex:sun rdfs:label "Sun" .
ex:orbits rdfs:label "orbits" .
""".encode()
    g = parse_graph_bytes(data, "space.ttl")
    assert triples(g) == {("Earth", "orbits", "Sun")}


def test_turtle_same_label_on_two_iris_stays_two_entities():
    data = b"""@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:paris_fr rdfs:label "Paris" ; ex:in ex:France .
ex:paris_tx rdfs:label "Paris" ; ex:in ex:Texas .
"""
    g = parse_graph_bytes(data, "paris.ttl")
    assert len(g.entities) == 4
    assert any("share a label" in n for n in g.notes)


def test_linearized_pipes_lines_and_prompt_brackets():
    text = "[ Grand Bahama -> location.location.containedby -> Bahamas | Bahamas -> location.country.capital -> Nassau ]\nCat Island, Bahamas -> x -> Bahamas\n"
    g = parse_graph_bytes(text.encode(), "context.txt")
    assert triples(g) == {
        ("Grand Bahama", "location.location.containedby", "Bahamas"),
        ("Bahamas", "location.country.capital", "Nassau"),
        ("Cat Island, Bahamas", "x", "Bahamas"),
    }


def test_linearize_round_trip():
    g = KnowledgeGraph.from_triplets([("a", "r", "b"), ("b", "s", "c d")])
    text = linearize(g.triplets)
    assert text == "a -> r -> b | b -> s -> c d"
    assert parse_linearized(text) == [("a", "r", "b"), ("b", "s", "c d")]
    assert triples(parse_graph_bytes(text.encode(), "x.dog")) == triples(g)


@pytest.mark.parametrize(
    "content,expected",
    [
        (b"A\tr\tB\n", {("A", "r", "B")}),
        (b"A -> r -> B | B -> s -> C\n", {("A", "r", "B"), ("B", "s", "C")}),
        (b'[["A", "r", "B"]]', {("A", "r", "B")}),
        (b'{"head": "A", "relation": "r", "tail": "B"}\n', {("A", "r", "B")}),
        (b"<http://x/A> <http://x/r> <http://x/B> .\n", {("A", "r", "B")}),
        (b"@prefix x: <http://x/> .\nx:A x:r x:B .\n", {("A", "r", "B")}),
        (b"A,r,B\n", {("A", "r", "B")}),
    ],
)
def test_sniffing_unknown_extension(content, expected):
    assert triples(parse_graph_bytes(content, "upload.txt")) == expected


def test_gzip_by_extension_and_magic(tmp_path):
    p = tmp_path / "kb.tsv.gz"
    p.write_bytes(gzip.compress("Amélie\tin_language\tFrançais\n".encode()))
    g = load_graph(p)
    assert triples(g) == {("Amélie", "in_language", "Français")}
    assert g.name == "kb"
    # an upload with no .gz suffix is recognised by its magic bytes
    assert len(parse_graph_bytes(p.read_bytes(), "kb.tsv")) == 1


def test_unicode_and_duplicates_counted():
    data = "Gert Fröbe\tstarred_in\t金の鍵\nGert Fröbe\tstarred_in\t金の鍵\nGert Fröbe\tstarred_in\t金の鍵\nx\ty\tz\n"
    g = parse_graph_bytes(data.encode("utf-8"), "u.tsv")
    assert len(g) == 2
    assert g.duplicates_dropped == 2
    assert any("2 duplicate triplets" in n for n in g.notes)
    assert g.has_entity("金の鍵")


def test_utf8_bom_is_not_part_of_the_first_name():
    g = parse_graph_bytes("\ufeffA\tr\tB\n".encode("utf-8"), "bom.tsv")
    assert g.has_entity("A")


def test_explicit_format_overrides_extension():
    g = parse_graph_bytes(b"A,r,B\n", "data.tsv", fmt="csv")
    assert triples(g) == {("A", "r", "B")}


# ------------------------------------------------------------------ errors
def test_wrong_column_count_names_first_bad_line_and_total(tmp_path):
    lines = [f"m{i}\tr\tt{i}" for i in range(1, 17)] + ["m17\tr", "m18\tr\tt\textra", "only", "m20\tr"]
    p = tmp_path / "movies.tsv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(GraphFormatError) as info:
        load_graph(p)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.file, err.line, err.bad_lines) == ("movies.tsv", 17, 4)
    assert str(err) == (
        "movies.tsv, line 17: expected 3 columns (head, relation, tail) separated by tabs, found 2 (4 bad lines in total)"
    )


def test_empty_field_is_an_error():
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(b"A\tr\tB\nC\t\tD\n", "g.tsv")
    assert info.value.line == 2 and "empty relation" in str(info.value)


def test_csv_empty_field_and_bad_quoting():
    with pytest.raises(GraphFormatError, match=r"g.csv, line 2: empty tail"):
        parse_graph_bytes(b'a,r,b\nc,r,""\n', "g.csv")
    with pytest.raises(GraphFormatError, match=r"g.csv, line 2: malformed CSV quoting"):
        parse_graph_bytes(b'a,r,b\n"c"x,r,d\n', "g.csv")


def test_undecodable_bytes_name_the_line():
    data = "A\tr\tB\nC\tr\tD\n".encode() + b"\xff\xfe\tr\tx\n" + "E\tr\tF\n".encode()
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(data, "latin.tsv")
    assert info.value.line == 3
    assert "not UTF-8" in str(info.value)


def test_unknown_format():
    with pytest.raises(GraphFormatError, match="unknown format"):
        parse_graph_bytes(b"just some words\nwithout structure\n", "notes.md")
    with pytest.raises(GraphFormatError, match="unknown format 'xml'"):
        parse_graph_bytes(b"A\tr\tB\n", "g.tsv", fmt="xml")


def test_file_too_large(tmp_path):
    p = tmp_path / "big.tsv"
    p.write_text("A\tr\tB\n" * 1000, encoding="utf-8")
    with pytest.raises(GraphFormatError, match="file too large"):
        load_graph(p, max_bytes=1000)
    # a small gzip that decompresses past the limit is caught while decompressing
    gz = tmp_path / "bomb.tsv.gz"
    gz.write_bytes(gzip.compress(b"A\tr\tB\n" * 100_000))
    assert gz.stat().st_size < 10_000
    with pytest.raises(GraphFormatError, match="decompresses to more than"):
        load_graph(gz, max_bytes=100_000)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.tsv"
    p.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(GraphFormatError, match="empty.tsv: the file is empty"):
        load_graph(p)


def test_header_only_file_has_no_triplets():
    with pytest.raises(GraphFormatError, match="no triplets"):
        parse_graph_bytes(b"head\trelation\ttail\n", "h.tsv")


def test_missing_file(tmp_path):
    with pytest.raises(GraphFormatError, match="file not found"):
        load_graph(tmp_path / "nope.tsv")


def test_turtle_syntax_error_has_line():
    data = b"@prefix ex: <http://ex.org/> .\nex:a ex:b ex:c .\nex:a ex:b .\n"
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(data, "bad.ttl")
    assert info.value.line == 3
    assert str(info.value).startswith("bad.ttl, line 3: Turtle syntax error")


def test_ntriples_errors_are_all_counted():
    data = b"<http://a> <http://b> <http://c> .\n<http://a> <http://b> .\n<http://a> <http://b> <http://d> .\nnonsense\n"
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(data, "bad.nt")
    assert (info.value.line, info.value.bad_lines) == (2, 2)


def test_json_bad_records_and_bad_syntax():
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(b'[["a","r","b"], ["a","r"], {"x": 1}, ["a", null, "b"]]', "g.json")
    assert info.value.record == 2 and info.value.bad_lines == 3
    assert "record 2" in str(info.value) and "3 bad records in total" in str(info.value)
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(b'[\n["a","r","b"],\n["a","r" "b"]\n]', "g.json")
    assert info.value.line == 3 and "invalid JSON" in str(info.value)


def test_jsonl_bad_line():
    with pytest.raises(GraphFormatError, match=r"g.jsonl, line 2: invalid JSON.*\(2 bad lines in total\)"):
        parse_graph_bytes(b'["a","r","b"]\n{oops\n["a","r","b"]\n["x"]\n', "g.jsonl")


def test_linearized_bad_segment():
    with pytest.raises(GraphFormatError) as info:
        parse_graph_bytes(b"a -> r -> b | a -> r\nc -> d -> e\nx -> -> y\n", "ctx.dog")
    assert (info.value.line, info.value.bad_lines) == (1, 2)
    assert "expected 'head -> relation -> tail'" in str(info.value)


# ------------------------------------------------------------------ properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_name = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\t|->[]\"\u0085\ufeff"),
    min_size=1,
    max_size=12,
).map(str.strip).filter(bool)
_triplets = st.lists(st.tuples(_name, _name, _name), min_size=1, max_size=15)


@settings(max_examples=60, deadline=None)
@given(_triplets)
def test_round_trip_tsv_json_linearized(trips):
    expected = set(trips)
    tsv = "".join(f"{h}\t{r}\t{t}\n" for h, r, t in trips).encode()
    assert triples(parse_graph_bytes(tsv, "p.tsv")) == expected
    assert triples(parse_graph_bytes(json.dumps(trips).encode(), "p.json")) == expected
    assert triples(parse_graph_bytes(linearize(trips).encode(), "p.dog")) == expected
    g = parse_graph_bytes(tsv, "p.tsv")
    assert len(g) + g.duplicates_dropped == len(trips)
