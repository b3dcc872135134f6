"""Key-entity expansion: mentions of the chain of thought linked to the graph."""

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.rok.key_entities import extract_mentions, find_key_entities


def _graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("The Fugitive", "directed_by", "Andrew Davis"),
        ("The Fugitive", "starred_actors", "Harrison Ford"),
        ("The Fugitive", "release_year", "1993"),
        ("The Fugitive", "has_genre", "Thriller"),
        ("Witness", "starred_actors", "Harrison Ford"),
        ("New York City", "located_in", "United States"),
    ])


def test_extract_mentions_finds_names_quotes_and_years():
    text = 'Step 1: The film "The Fugitive" stars **Harrison Ford**. It came out in 1993, so the Director was Andrew Davis.'
    mentions = {m.text: m.kind for m in extract_mentions(text)}
    assert mentions["The Fugitive"] == "quoted"
    assert mentions["Harrison Ford"] == "quoted"
    assert mentions["1993"] == "year"
    assert "Andrew Davis" in mentions
    assert "Step 1" not in mentions
    assert "It" not in mentions and "The" not in mentions


def test_cot_entities_link_exact_fuzzy_and_report_unlinked():
    g = _graph()
    cot = "The Fugitive was directed by Andrew Davies and starred Harrison Ford alongside Tommy Lee Jones."
    res = find_key_entities("who directed [The Fugitive]", cot, g, embedder=None)
    by_mention = {l.mention: l for l in res.links if l.source == "cot"}
    assert by_mention["Andrew Davies"].entity == "Andrew Davis"
    assert by_mention["Andrew Davies"].method == "fuzzy"
    assert by_mention["Harrison Ford"].entity == "Harrison Ford"
    assert by_mention["Tommy Lee Jones"].entity is None
    assert "Tommy Lee Jones" in [l.mention for l in res.unlinked]
    # question entity first, then CoT entities in order of appearance
    assert res.key_entities[:3] == ["The Fugitive", "Andrew Davis", "Harrison Ford"]
    assert any("lexically only" in n for n in res.notes)


def test_topic_entities_come_first_and_cap_is_noted():
    g = _graph()
    cot = "Witness, Thriller, 1993, Harrison Ford, Andrew Davis, New York City, United States"
    res = find_key_entities("which films star this actor", cot, g, topic_entities=["Harrison Ford"],
                            embedder=None, max_key_entities=3)
    assert res.key_entities[0] == "Harrison Ford"
    assert len(res.key_entities) == 3
    assert any("left out" in n for n in res.notes)


def test_unknown_topic_entity_is_reported_not_raised():
    g = _graph()
    res = find_key_entities("who directed it", "", g, topic_entities=["Nonexistent Film"], embedder=None)
    assert res.key_entities == []
    assert any("Nonexistent Film" in n for n in res.notes)


def test_embedding_similarity_links_a_paraphrase():
    from kgqa_core.graph.embeddings import load_embedder

    embedder = load_embedder()
    if embedder is None:
        pytest.skip("all-MiniLM-L6-v2 package not installed")
    g = _graph()
    res = find_key_entities("where is it", "It is in NYC, in the USA.", g, embedder=embedder)
    linked = {l.mention: (l.entity, l.method) for l in res.links if l.entity}
    assert linked.get("USA") == ("United States", "embedding")
    assert linked.get("NYC") == ("New York City", "embedding")
    assert res.embedder == "all-MiniLM-L6-v2" and not res.notes


def test_cot_boilerplate_does_not_become_key_entities():
    g = KnowledgeGraph.from_triplets([
        ("Answer This!", "has_genre", "Comedy"),
        ("California Suite", "has_genre", "Comedy"),
        ("Once Were Warriors", "starred_actors", "Temuera Morrison"),
        ("Once Were Warriors", "release_year", "1994"),
    ])
    cot = ("To answer this question, I'll follow these steps.\nHe was born in California.\nStep 2: "
           "in 1994 he starred in Once Were Warriors.")
    res = find_key_entities("what did [Temuera Morrison] act in", cot, g, ["Temuera Morrison"], embedder=None,
                            max_key_entities=2)
    assert "Answer This!" not in res.key_entities and "California Suite" not in res.key_entities
    # the cap keeps the certain full-name link before the bare year
    assert res.key_entities == ["Temuera Morrison", "Once Were Warriors"]
