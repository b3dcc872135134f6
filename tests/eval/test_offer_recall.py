"""benchmarks/offer_recall.py finds each question's gold walk and says whether the reader offers it (no model)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.benchmark_script import load_benchmark

def _script():
    return load_benchmark("offer_recall")


def _write(tmp_path: Path, lines: list[dict]) -> Path:
    graph = tmp_path / "people.tsv"
    graph.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in [
        ("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "ethnicity", "dutch"),
        ("Bob", "place_of_birth", "Delft"), ("Ann", "place_of_birth", "Leiden"), ("Delft", "located_in", "Netherlands"),
    ]))
    path = tmp_path / "people_dev.jsonl"
    path.write_text("".join(json.dumps({**line, "graph_file": graph.name}) + "\n" for line in lines))
    return path


def test_gold_walks_from_chains_or_answers_are_found_offered_or_not(tmp_path, capsys):
    script = _script()
    path = _write(tmp_path, [
        {"id": "q1", "question": "what is the ethnicity of Ann's husband", "topic_entities": ["Ann"],
         "answers": ["germans"], "type": "2hop",
         "gold_chain": [["Ann", "spouse", "Bob"], ["Bob", "ethnicity", "germans"]]},
        # no gold chain: the walk whose ends are the answers
        {"id": "q2", "question": "where was Ann's husband born", "topic_entities": ["Ann"], "answers": ["Delft"],
         "type": "2hop"},
        # a gold walk the graph does not hold is counted as a question, never as offered
        {"id": "q3", "question": "who is Ann's boss", "topic_entities": ["Ann"], "answers": ["Eve"], "type": "1hop",
         "gold_chain": [["Ann", "works_for", "Eve"]]},
        {"id": "q4", "question": "who are Ann and Bob", "topic_entities": ["Ann", "Bob"], "answers": ["x"],
         "type": "2hop"},  # two entities: left out
    ])
    counts = script.offer_recall(path)
    assert counts[("people_dev", "2hop", "n")] == 2 and counts[("people_dev", "2hop", "exists")] == 2
    assert counts[("people_dev", "2hop", "offered")] == 2  # a graph this small: every walk is offered
    assert counts[("people_dev", "1hop", "n")] == 1 and counts[("people_dev", "1hop", "exists")] == 0
    assert script.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "| people_dev | 2hop | 2 | 2 | 2 |" in out and "offered for 2 of the 2 questions" in out


def test_a_walk_from_answers_needs_half_their_ends_to_be_answers(tmp_path):
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.reading.paths import relation_paths

    script = _script()
    graph = KnowledgeGraph.from_triplets([("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"),
                                          ("Ann", "ethnicity", "dutch")])
    plans = relation_paths(graph, ["Ann"], 2)
    assert script.answers_walk(graph, plans, {"germans"}, 2) == ("spouse", "ethnicity")
    assert script.answers_walk(graph, plans, {"dutch"}, 1) == ("ethnicity",)
    assert script.answers_walk(graph, plans, {"nobody"}, 2) is None
