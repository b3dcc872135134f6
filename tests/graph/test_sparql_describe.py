"""`describe_relations` on a SPARQL store (a real Oxigraph server): the store's relation names are described once
for the store, not again for every question's fetched neighbourhood."""

from __future__ import annotations

from kgqa_core.graph.sparql import SparqlGraphStore
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading.drafting import forget_descriptions
from kgqa_core.reading.guidance import clear_readings

from .sparql_data import EX, RDFS_LABEL, _iri, _nt, literal, oxigraph_serving

NAMES = {"faust": "Faust (traduction)", "nerval": "Gérard de Nerval", "goethe": "Goethe", "paris": "Paris",
         "francfort": "Francfort"}
FACTS = [("faust", "traducteur", "nerval"), ("faust", "auteur", "goethe"), ("nerval", "lieuDeNaissance", "paris"),
         ("goethe", "lieuDeNaissance", "francfort")]


def _ntriples() -> str:
    lines = [_nt(EX + k, RDFS_LABEL, literal(v, lang="en")) for k, v in NAMES.items()]
    lines += [_nt(EX + h, EX + r, _iri(EX + t)) for h, r, t in FACTS]
    return "".join(lines)


def test_a_stores_relations_are_described_once_for_the_store(tmp_path, small_model):
    forget_descriptions()
    clear_readings()
    params = {"beam_size": 1, "max_steps": 1, "max_new_tokens": 24}
    with oxigraph_serving(tmp_path, "french", _ntriples()) as (endpoint, _):
        store = SparqlGraphStore(endpoint, "rdf", hops=2)
        first = run_method("dog", MethodRequest(store, "who translated Faust (traduction)?", small_model,
                                                ["Faust (traduction)"], params=params))
        second = run_method("dog", MethodRequest(store, "where was Gérard de Nerval born?", small_model,
                                                 ["Gérard de Nerval"], params=params))
    forget_descriptions()
    assert not first.error and not second.error, (first.error, second.error)
    one, two = first.extra["described_relations"], second.extra["described_relations"]
    assert "traducteur" in one["unread"] and "lieuDeNaissance" in one["unread"] and one["drafted_now"]
    assert "lieuDeNaissance" in two["unread"]
    assert "lieuDeNaissance" not in two["drafted_now"], "described for the store by the first question"
    assert two["entries"].get("lieuDeNaissance") == one["entries"].get("lieuDeNaissance")
    assert "cannot read" in first.steps[0].note
