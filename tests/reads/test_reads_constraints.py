"""Constraint values from questions, option pools, and subtree pruning."""

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.reads.abstract_structure import AbstractStructure
from kgqa_core.reads.constraints import (
    ConstraintOption,
    ConstraintValue,
    apply_constraint,
    constraint_entities,
    constraint_options,
    has_superlative,
    parse_question_values,
)
from kgqa_core.reads.options import search_options


def test_question_values():
    vals = parse_question_values("which team won the Super Bowl in 2011 with 3,500 yards on August 10, 2015?")
    by_text = {v.text: v for v in vals}
    assert by_text["2011"].kind == "date" and by_text["2011"].date == (2011,)
    assert by_text["3,500"].kind == "num" and by_text["3,500"].number == 3500.0
    assert by_text["August 10, 2015"].date == (2015, 8, 10)
    assert "10" not in by_text  # inside the date
    assert parse_question_values("films from 1999-12-31 or 2.5 stars")[0].date == (1999, 12, 31)
    assert has_superlative("what is the latest film") and not has_superlative("what films did he direct")


def _expand(g, s, *texts):
    for t in texts:
        o = next(o for o in search_options(g, s) if o.text == t)
        s.add_node(o.node_id, o.relation, o.inverse, o.links)


def _nolan():
    g = KnowledgeGraph.from_triplets([
        ("Memento", "directed_by", "Nolan"), ("Memento", "release_year", "2000"),
        ("Interstellar", "directed_by", "Nolan"), ("Interstellar", "release_year", "2014"),
        ("Insomnia", "directed_by", "Nolan"), ("Insomnia", "release_year", "2002"),
        ("Insomnia", "release_year", "2003"),  # two values: kept if one satisfies
    ])
    s = AbstractStructure("Nolan")
    _expand(g, s, "Nolan + directed_by (reverse)", "entity_1 + release_year")
    return g, s


def test_comparison_and_extremes_prune_the_right_films():
    g, s = _nolan()
    assert s["date_2"].type == "date"
    year = ConstraintValue("2001", "date", 2001.0, (2001,))
    trial = s.copy()
    removed = apply_constraint(trial, ConstraintOption("date_2", ">", year))
    assert sorted(trial["entity_1"].entities) == ["Insomnia", "Interstellar"]
    assert {g.triplet(i).as_tuple for i in removed} == {
        ("Memento", "directed_by", "Nolan"), ("Memento", "release_year", "2000")}
    trial = s.copy()
    apply_constraint(trial, ConstraintOption("date_2", "<=", ConstraintValue("2002", "date", 2002.0, (2002,))))
    assert sorted(trial["entity_1"].entities) == ["Insomnia", "Memento"]
    trial = s.copy()
    apply_constraint(trial, ConstraintOption("date_2", "min"))
    assert trial["entity_1"].entities == ["Memento"]
    assert sorted(s["entity_1"].entities) == ["Insomnia", "Interstellar", "Memento"]  # copies are independent


def test_options_only_when_they_prune():
    g, s = _nolan()
    vals = parse_question_values("which films came out after 2001?")
    texts = [o.text for o in constraint_options(s, vals, "which films came out after 2001?")]
    assert "date_2 > 2001" in texts and "date_2 >= 2001" in texts
    assert "date_2 = 2001" not in texts  # would empty the position
    assert "date_2 < 1900" not in texts and not any("max" in t for t in texts)  # no superlative cue
    sup = [o.text for o in constraint_options(s, [], "what is the earliest film?")]
    assert sup == ["date_2 max", "date_2 min"]
    used = constraint_options(s, [], "earliest?", used=[ConstraintOption("date_2", "min")])
    assert used == []


def test_constraint_entities_from_question_mentions():
    g = KnowledgeGraph.from_triplets([
        ("Kevin Love", "education", "m.01a"), ("Kevin Love", "education", "m.02b"),
        ("m.01a", "institution", "UCLA"), ("m.02b", "institution", "Lake Oswego High School"),
        ("UCLA", "notable_types", "College/University"), ("Lake Oswego High School", "notable_types", "School"),
    ])
    s = AbstractStructure("Kevin Love")
    _expand(g, s, "Kevin Love + education", "topic_1 + institution", "entity_2 + notable_types")
    q = "where did kevin love go to college?"
    vals = constraint_entities(q, s)
    assert [v.text for v in vals] == ["College/University"]
    opts = constraint_options(s, vals, q)
    assert [o.text for o in opts] == ["entity_3 = College/University"]
    apply_constraint(s, opts[0])
    assert s["entity_2"].entities == ["UCLA"] and s["topic_1"].entities == ["m.01a"]


def test_mentions_inside_the_topic_name_do_not_count():
    g = KnowledgeGraph.from_triplets([("Knight Rider", "character", "Knight"), ("Knight Rider", "character", "KITT")])
    s = AbstractStructure("Knight Rider")
    _expand(g, s, "Knight Rider + character")
    assert [v.text for v in constraint_entities("who voices kitt in knight rider", s)] == ["KITT"]


def test_a_value_read_both_as_an_entity_and_as_a_number_is_offered_once():
    """"the mountain of california with elevation 4317": 4317 is a graph entity the question names and a number
    it writes; two options with one text made the model's choice fail (duplicate option texts)."""
    g, s = _nolan()
    q = "which film directed by Nolan came out in 2014?"
    vals = [ConstraintValue("2014", "entity")] + parse_question_values(q)
    texts = [o.text for o in constraint_options(s, vals, q)]
    assert texts.count("date_2 = 2014") == 1 and len(texts) == len(set(texts))
