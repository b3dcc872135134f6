"""S_k: node types and names (App. A, Tab. 13), grouping, cascade pruning."""

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.reads.abstract_structure import AbstractStructure, detect_type
from kgqa_core.reads.options import answer_options, rank_pool, relation_words, search_options


def test_entity_types():
    assert detect_type("m.03lj4m5") == "topic"
    assert detect_type("_:b12") == "topic"
    assert detect_type("William Daniels") == "entity"
    assert detect_type("240.15") == "num"
    assert detect_type('"240.15"^^xsd:float') == "num"
    assert detect_type("2015-08-10") == "date"
    assert detect_type("2015\\08\\10") == "date"
    assert detect_type("August 10, 2015") == "date"
    assert detect_type("1997", "release_year") == "date"
    assert detect_type("1997", "population") == "num"


def _films():
    return KnowledgeGraph.from_triplets([
        ("Titanic", "directed_by", "James Cameron"),
        ("Avatar", "directed_by", "James Cameron"),
        ("Titanic", "release_year", "1997"),
        ("Titanic", "starred_actors", "Kate Winslet"),
        ("Titanic", "starred_actors", "Leonardo DiCaprio"),
    ])


def test_grouping_names_and_linearisation():
    g = _films()
    s = AbstractStructure("Titanic")
    pool = {o.text: o for o in search_options(g, s)}
    assert set(pool) == {"Titanic + directed_by", "Titanic + release_year", "Titanic + starred_actors"}
    actors = pool["Titanic + starred_actors"]
    node = s.add_node(actors.node_id, actors.relation, actors.inverse, actors.links)
    assert node.id == "entity_1" and node.entities == ["Kate Winslet", "Leonardo DiCaprio"]
    year = pool["Titanic + release_year"]
    ynode = s.add_node(year.node_id, year.relation, year.inverse, year.links)
    assert ynode.id == "date_2"  # one counter over the whole structure
    text = s.linearize(examples=1)
    assert '("Titanic", "starred_actors", "entity_1")' in text
    assert "entity_1: Kate Winslet (+1 more)" in text
    assert s.linearize(examples=0).count("\n") == 1  # the paper's bare triples
    d = s.to_dict()["nodes"]
    assert [n["id"] for n in d] == ["Titanic", "entity_1", "date_2"]
    assert {"id", "type", "parent", "relation", "entities"} <= set(d[1])
    # literal nodes are not expanded, already-expanded relations are not offered again
    texts = {o.text for o in search_options(g, s)}
    assert texts == {"Titanic + directed_by"}


def test_reverse_expansion_excludes_the_root():
    g = _films()
    s = AbstractStructure("Titanic")
    o = next(o for o in search_options(g, s) if o.relation == "directed_by")
    s.add_node(o.node_id, o.relation, o.inverse, o.links)
    rev = next(o for o in search_options(g, s) if o.node_id == "entity_1")
    assert rev.text == "entity_1 + directed_by (reverse)"
    assert rev.entities == ["Avatar"]


def test_cascade_keeps_entities_with_another_parent():
    g = KnowledgeGraph.from_triplets([
        ("X", "r", "a"), ("X", "r", "b"), ("a", "s", "shared"), ("b", "s", "shared"), ("a", "s", "only_a"),
    ])
    s = AbstractStructure("X")
    o = search_options(g, s)[0]
    s.add_node(o.node_id, o.relation, o.inverse, o.links)
    o = search_options(g, s)[0]
    s.add_node(o.node_id, o.relation, o.inverse, o.links)
    removed = s.remove_entities("entity_1", ["a"])
    assert s["entity_2"].entities == ["shared"]
    assert {g.triplet(i).as_tuple for i in removed} == {("X", "r", "a"), ("a", "s", "shared"), ("a", "s", "only_a")}


def test_answer_options_skip_root_and_constraint_positions():
    g = _films()
    s = AbstractStructure("Titanic")
    for o in search_options(g, s)[:2]:
        s.add_node(o.node_id, o.relation, o.inverse, o.links)
    opts = answer_options(s, used_positions={"date_2"})
    assert [o.text for o in opts] == ["Titanic + directed_by -> entity_1"]


def test_rank_pool_keeps_the_most_question_like_relations():
    g = KnowledgeGraph.from_triplets([("Hub", f"misc_{i}", f"t{i}") for i in range(10)] + [("Hub", "film.director", "D")])
    s = AbstractStructure("Hub")
    pool = search_options(g, s)
    ranked = rank_pool("which director made Hub?", pool, 3, embed=None)
    assert ranked.cut and ranked.total == 11 and ranked.method == "lexical"
    assert "Hub + film.director" in [o.text for o in ranked.options]
    assert relation_words("tv.tv_program.regular_cast") == "tv tv program regular cast"


def test_per_node_triplet_cap():
    g = KnowledgeGraph.from_triplets([("Genre", "has", f"film {i}") for i in range(50)])
    s = AbstractStructure("Genre")
    (o,) = search_options(g, s, max_node_triplets=10)
    assert len(o.links) == 10 and o.truncated_from == 50


def test_topic_nodes_answer_only_when_nothing_else_can():
    g = KnowledgeGraph.from_triplets([("Show", "cast", "m.0abc1"), ("m.0abc1", "actor", "Someone")])
    s = AbstractStructure("Show")
    o = search_options(g, s)[0]
    s.add_node(o.node_id, o.relation, o.inverse, o.links)
    assert [a.node_id for a in answer_options(s, set())] == ["topic_1"]
    o = search_options(g, s)[0]
    s.add_node(o.node_id, o.relation, o.inverse, o.links)
    assert [a.node_id for a in answer_options(s, set())] == ["entity_2"]
