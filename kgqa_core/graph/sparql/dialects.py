"""How a store names its entities and which of its edges are facts.

* ``rdf``: any RDF graph; names from ``rdfs:label`` then ``skos:prefLabel``
  (the chosen language, then none, then any), else the IRI's local name, as
  the N-Triples loader names an upload.  Label edges are names, not facts.
* ``freebase``: ``http://rdf.freebase.com/ns/`` IRIs named by
  ``type.object.name``; an IRI without a name is a mediator (CVT) node, as in
  ToG and DoG, and is collapsed: ``e -r1-> cvt -r2-> x`` becomes one triplet
  ``(e, "r1 / r2", x)``, so a chain passes through it in one step.
* ``wikidata``: only truthy ``wdt:`` statements are facts; entities and
  properties are named by ``rdfs:label`` in the chosen language (a ``wdt:P57``
  edge is named by the label of ``wd:P57``).
"""

from __future__ import annotations

from dataclasses import dataclass

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_PREF_LABEL = "http://www.w3.org/2004/02/skos/core#prefLabel"
FREEBASE_NS = "http://rdf.freebase.com/ns/"
FREEBASE_NAME = FREEBASE_NS + "type.object.name"
WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"
WIKIDATA_DIRECT = "http://www.wikidata.org/prop/direct/"


@dataclass(frozen=True)
class Dialect:
    """The rules one kind of store follows (see the module doc)."""

    name: str
    title: str
    label_predicates: tuple[str, ...]
    fact_predicate_prefix: str | None = None  # only predicates under this IRI are facts
    collapse_unnamed: bool = False  # IRIs without a label are mediator nodes
    entity_base: str | None = None  # where a bare id ("m.0abc", "Q42") lives

    def is_fact_predicate(self, predicate: str) -> bool:
        if predicate in self.label_predicates:
            return False
        return self.fact_predicate_prefix is None or predicate.startswith(self.fact_predicate_prefix)

    def label_subject(self, predicate: str) -> str:
        """The IRI whose label names `predicate` (Wikidata: ``wdt:P57`` is named by ``wd:P57``)."""
        if self.name == "wikidata" and predicate.startswith(WIKIDATA_DIRECT):
            return WIKIDATA_ENTITY + predicate[len(WIKIDATA_DIRECT):]
        return predicate

    def fact_filter(self, var: str = "?p") -> str:
        """A FILTER keeping fact edges (written from constants, never from user text)."""
        excluded = ", ".join(f"<{p}>" for p in self.label_predicates)
        parts = [f"{var} NOT IN ({excluded})"]
        if self.fact_predicate_prefix:
            parts.append(f'STRSTARTS(STR({var}), "{self.fact_predicate_prefix}")')
        return "FILTER(" + " && ".join(parts) + ")"


DIALECTS: dict[str, Dialect] = {
    "rdf": Dialect("rdf", "plain RDF (rdfs:label / skos:prefLabel)", (RDFS_LABEL, SKOS_PREF_LABEL)),
    "freebase": Dialect(
        "freebase", "Freebase (ns: IRIs, type.object.name, CVT nodes collapsed)",
        (FREEBASE_NAME, RDFS_LABEL), fact_predicate_prefix=FREEBASE_NS, collapse_unnamed=True,
        entity_base=FREEBASE_NS,
    ),
    "wikidata": Dialect(
        "wikidata", "Wikidata (wdt: truthy statements, rdfs:label)",
        (RDFS_LABEL,), fact_predicate_prefix=WIKIDATA_DIRECT, entity_base=WIKIDATA_ENTITY,
    ),
}


def get_dialect(name: str) -> Dialect:
    try:
        return DIALECTS[(name or "").strip().lower()]
    except KeyError:
        raise ValueError(f"unknown SPARQL dialect {name!r}; choose one of: {', '.join(DIALECTS)}") from None
