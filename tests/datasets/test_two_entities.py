"""The two-entity dev sets (questions naming two entities, LPKG's 2i pattern): fair over their whole graph, and
rebuilt byte for byte by the documented `generate` command."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa_core.datasets.multidomain import TWO_ENTITY_SETS
from kgqa_core.eval.dataset import load_dataset

ROOT = Path(__file__).resolve().parents[2]
SETS = {name: ROOT / path for name, path in TWO_ENTITY_SETS.items()}


def _branch(graph, anchor: str, triplet) -> set[str]:
    """Every entity the graph links to `anchor` by the gold triplet's relation, the gold triplet's way round."""
    h, r, t = triplet
    if h == anchor:
        return {x.tail for x in graph.neighbours(anchor) if x.head == anchor and x.relation == r}
    return {x.head for x in graph.neighbours(anchor) if x.tail == anchor and x.relation == r}


@pytest.mark.parametrize("name", sorted(SETS))
def test_each_answer_set_is_exactly_what_both_entities_share_in_the_whole_graph(name):
    ds = load_dataset(SETS[name])
    assert len(ds) == 10 and {q.type for q in ds} == {"2i"}
    graph = ds[0].graph()
    assert len({q.graph_file for q in ds}) == 1 and len(graph) > 1000  # one whole domain graph
    for q in ds:
        assert len(q.topic_entities) == 2 and all(graph.has_entity(t) for t in q.topic_entities), q.id
        shared = set.intersection(*(
            set.union(*(_branch(graph, anchor, t) for t in q.gold_chain if anchor in (t[0], t[2])))
            for anchor in q.topic_entities))
        assert set(q.answers) == shared - set(q.topic_entities), q.id


def test_the_documented_command_rebuilds_each_set_byte_for_byte(tmp_path):
    from kgqa_core.cli import main

    for name, path in SETS.items():
        graph = next(path.parent.glob(f"{name.removesuffix('-2i')}_kb.tsv.gz"))
        out = tmp_path / name / path.name
        out.parent.mkdir()
        assert main(["generate", "--graph", str(graph), "--patterns", "2i", "--n", "10", "--seed", "0",
                     "--out", str(out)]) == 0
        assert out.read_bytes() == path.read_bytes(), name
        readme = (path.parent / "README.md").read_text(encoding="utf-8")
        assert f"--out {path.relative_to(ROOT).as_posix()}" in readme and path.name in readme
