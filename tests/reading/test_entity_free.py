"""The first look compares walks where they part at a relation, not at an entity's name (`paths:entity_free`).

Each walk's reply is written through the first entities the graph gave along it, so two walks over the same first
relation can pass different entities; scored token by token where the replies part (`trie_logprobs`), the model's
liking for one entity's name over another's then decides between relations.
"""

from __future__ import annotations

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.reading.paths import relation_paths
from kgqa_core.reading.readers import ENTITY_TOKEN, entity_free_ids, entity_spans, make_reader, reply_text
from kgqa_core.reads.scoring import trie_logprobs

# Irene's first film (Frost) has a director and no one else; her second (Gale) has a co-star: the walk to her films'
# directors passes Frost, the walk to her co-stars Gale
FILMS = KnowledgeGraph.from_triplets([
    ("Frost", "starred_actors", "Irene"), ("Frost", "directed_by", "Dan"),
    ("Gale", "starred_actors", "Irene"), ("Gale", "starred_actors", "Sam"),
], name="films")


def _walks() -> dict:
    return {p.text: p for p in relation_paths(FILMS, ["Irene"], max_hops=2)}


def test_an_entitys_name_in_a_reply_is_found_where_the_reply_writes_it():
    walks = _walks()
    director = walks["Irene -> starred_actors (reverse) -> directed_by"]
    text = reply_text(director)
    assert text == "Irene -starred_actors (reverse)-> Frost -directed_by-> Dan"
    assert [text[a:b] for a, b in entity_spans(director)] == ["Frost", "Dan"]


def test_walks_that_pass_other_entities_part_only_at_their_relations(backend_model):
    walks = _walks()
    director = walks["Irene -> starred_actors (reverse) -> directed_by"]
    costar = walks["Irene -> starred_actors (reverse) -> starred_actors"]
    assert director.walk[1] != costar.walk[1]  # the replies part at the film's name
    replies = [reply_text(director) + "\n", reply_text(costar) + "\n"]
    scores = backend_model.score_continuations("Who starred with Irene?\n", replies)
    freed = [entity_free_ids(backend_model, p, s.token_ids, s.token_logprobs) for p, s in zip((director, costar), scores)]
    (ids_a, lps_a), (ids_b, lps_b) = freed
    for (ids, lps), s in zip(freed, scores):
        assert len(ids) == len(lps) <= len(s.token_ids)  # a name of several tokens is one stand-in
        assert ids.count(ENTITY_TOKEN) == 2  # the film and the person, each one stand-in of log-probability 0
        assert all(lp == 0.0 for t, lp in zip(ids, lps) if t == ENTITY_TOKEN)
        kept = backend_model.decode([t for t in ids if t != ENTITY_TOKEN])
        assert "Irene" in kept and "starred_actors" in kept
        assert not {"Frost", "Gale", "Dan", "Sam"} & set(kept.replace("-", " ").split())
    first = ids_a.index(ENTITY_TOKEN)
    assert ids_a[:first + 1] == ids_b[:first + 1]  # one prefix up to the film
    parts = next(k for k, (a, b) in enumerate(zip(ids_a, ids_b)) if a != b)
    assert parts > first  # the relation after the film parts them
    assert backend_model.decode([ids_a[parts]]).strip() in "directed_by"
    assert backend_model.decode([ids_b[parts]]).strip() in "starred_actors"
    # before, the two parted at the film's name, and only there: the relations after it were free
    raw = trie_logprobs([s.token_ids for s in scores], [s.token_logprobs for s in scores])
    free = trie_logprobs([ids_a, ids_b], [lps_a, lps_b])
    assert raw != free


def test_the_reading_says_when_its_first_look_compared_relations_only(backend_model):
    question = "who starred in a film together with Irene"
    on = make_reader("paths:quick=1", backend_model).read(question, FILMS, ["Irene"])  # on by default
    off = make_reader("paths:quick=1,entity_free=0", backend_model).read(question, FILMS, ["Irene"])
    assert "`reading_entity_free`" in on.explanation and "`reading_entity_free`" not in off.explanation
    for reading in (on, off):
        assert reading.plans and reading.plans[0].text in _walks()
        assert abs(sum(p.confidence for p in reading.plans) - 1) < 1e-6
