"""Small graphs for the SPARQL store tests, in two forms: N-Triples for the store, names for an upload.

Each builder returns ``(ntriples_text, triplets)`` where `triplets` is what
the same data is as an uploaded graph (names, mediators collapsed), so a
test can compare a run on the endpoint with a run on the upload.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kgqa_core.graph.sparql.terms import literal

FB = "http://rdf.freebase.com/ns/"
WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
EX = "http://example.org/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS = "http://www.w3.org/2004/02/skos/core#prefLabel"
SCHEMA_DESC = "http://schema.org/description"

INJECTION = 'x" } DROP ALL ; INSERT DATA { <a:b> <a:b> "c" } #'
UNICODE = "Kurt Gödel – Ω “quoted” \\ back"


def _nt(s: str, p: str, o: str) -> str:
    return f"<{s}> <{p}> {o} .\n"


def _iri(v: str) -> str:
    return f"<{v}>"


def freebase() -> tuple[str, list[tuple[str, str, str]]]:
    """Films with a starring CVT node (film -> starring -> performance -> actor / character)."""
    names = {"m.01": "The Matrix", "m.02": "Lana Wachowski", "m.03": "Keanu Reeves", "m.04": "Action",
             "m.05": "Speed", "m.06": "Jan de Bont", "m.07": "Neo", "m.08": "Sandra Bullock"}
    lines = [_nt(FB + m, FB + "type.object.name", literal(n, lang="en")) for m, n in names.items()]
    lines.append(_nt(FB + "m.01", FB + "type.object.name", literal("Matrix", lang="de")))
    facts = [("m.01", "film.film.directed_by", "m.02"), ("m.01", "film.film.genre", "m.04"),
             ("m.05", "film.film.directed_by", "m.06"), ("m.05", "film.film.genre", "m.04"),
             ("m.01", "film.film.starring", "m.c1"), ("m.c1", "film.performance.actor", "m.03"),
             ("m.c1", "film.performance.character", "m.07"), ("m.05", "film.film.starring", "m.c2"),
             ("m.c2", "film.performance.actor", "m.03"), ("m.05", "film.film.starring", "m.c3"),
             ("m.c3", "film.performance.actor", "m.08")]
    lines += [_nt(FB + s, FB + p, _iri(FB + o)) for s, p, o in facts]
    lines.append(_nt(FB + "m.01", FB + "film.film.initial_release_date", literal("1999")))
    lines.append(_nt(FB + "m.01", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", _iri(FB + "film.film")))
    star = "film.film.starring / film.performance."
    triplets = [
        ("The Matrix", "film.film.directed_by", "Lana Wachowski"), ("The Matrix", "film.film.genre", "Action"),
        ("Speed", "film.film.directed_by", "Jan de Bont"), ("Speed", "film.film.genre", "Action"),
        ("The Matrix", star + "actor", "Keanu Reeves"), ("The Matrix", star + "character", "Neo"),
        ("Speed", star + "actor", "Keanu Reeves"), ("Speed", star + "actor", "Sandra Bullock"),
        ("The Matrix", "film.film.initial_release_date", "1999"),
    ]
    return "".join(lines), sorted(triplets)


def wikidata() -> tuple[str, list[tuple[str, str, str]]]:
    """Truthy wdt: statements next to full p:/ps: statements and descriptions that are not facts."""
    labels = {"Q1": ("Douglas Adams", "Douglas Adams"), "Q2": ("The Hitchhiker's Guide to the Galaxy", "Per Anhalter durch die Galaxis"),
              "Q3": ("Cambridge", "Cambridge"), "Q4": (INJECTION, INJECTION), "Q5": (UNICODE, UNICODE),
              "P50": ("author", "Autor"), "P19": ("place of birth", "Geburtsort"), "P737": ("influenced by", "beeinflusst von")}
    lines = []
    for q, (en, de) in labels.items():
        lines.append(_nt(WD + q, RDFS_LABEL, literal(en, lang="en")))
        lines.append(_nt(WD + q, RDFS_LABEL, literal(de, lang="de")))
    lines += [_nt(WD + "Q2", WDT + "P50", _iri(WD + "Q1")), _nt(WD + "Q1", WDT + "P19", _iri(WD + "Q3")),
              _nt(WD + "Q4", WDT + "P737", _iri(WD + "Q1")), _nt(WD + "Q5", WDT + "P737", _iri(WD + "Q4")),
              _nt(WD + "Q2", P + "P50", _iri(WD + "statement1")), _nt(WD + "statement1", PS + "P50", _iri(WD + "Q1")),
              _nt(WD + "Q1", SCHEMA_DESC, literal("English writer", lang="en"))]
    triplets = [("The Hitchhiker's Guide to the Galaxy", "author", "Douglas Adams"),
                ("Douglas Adams", "place of birth", "Cambridge"),
                (INJECTION, "influenced by", "Douglas Adams"), (UNICODE, "influenced by", INJECTION)]
    return "".join(lines), sorted(triplets)


def plain_rdf() -> str:
    """Plain RDF with rdfs:label names, one unlabelled IRI and a literal; compared with the N-Triples loader."""
    lines = [_nt(EX + "alice", RDFS_LABEL, literal("Alice", lang="en")),
             _nt(EX + "bob", RDFS_LABEL, literal("Bob")),
             _nt(EX + "knows", RDFS_LABEL, literal("knows", lang="en")),
             _nt(EX + "alice", EX + "knows", _iri(EX + "bob")),
             _nt(EX + "bob", EX + "knows", _iri(EX + "carol")),
             _nt(EX + "carol", EX + "worksAt", _iri(EX + "acme")),
             _nt(EX + "acme", EX + "founded", literal("1990")),
             _nt(EX + "dave", EX + "knows", _iri(EX + "alice"))]
    return "".join(lines)


@contextmanager
def oxigraph_serving(root: Path, name: str, ntriples: str) -> Iterator[tuple[str, Path]]:
    """A real Oxigraph server on a loopback port holding `ntriples` (written to ``root/name.nt``): (endpoint, file).

    The test is skipped, with the reason, when the server cannot be installed here.
    """
    import pytest

    from kgqa_core.graph.sparql.local_server import OxigraphServer, OxigraphUnavailable, oxigraph_command

    try:
        oxigraph_command()
    except OxigraphUnavailable as exc:
        pytest.skip(f"{exc}: it is in requirements-dev.txt")
    path = root / f"{name}.nt"
    path.write_text(ntriples, encoding="utf-8")
    with OxigraphServer([path], location=root / f"{name}-db") as server:
        yield server.endpoint, path
