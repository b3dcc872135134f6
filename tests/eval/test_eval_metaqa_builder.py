"""The MetaQA builder on the real development data (small n)."""

import pytest

from kgqa_core.datasets.__main__ import main as datasets_main
from kgqa_core.datasets.metaqa import MetaQAError, build_metaqa, default_data_dir
from kgqa_core.eval.dataset import load_dataset

pytestmark = pytest.mark.skipif(not (default_data_dir() / "kb.tsv.gz").is_file(), reason="MetaQA data not present")


def test_builder_cuts_capped_subgraphs_with_reachable_answers(tmp_path, capsys):
    out = tmp_path / "mq.jsonl"
    assert datasets_main(["metaqa", "--hops", "1,2", "--n", "6", "--max-triplets", "40", "--seed", "3", "--out", str(out)]) == 0
    assert "kept 3 1-hop, 3 2-hop" in capsys.readouterr().out
    ds = load_dataset(out)
    assert [q.type for q in ds] == ["1hop"] * 3 + ["2hop"] * 3
    for q in ds:
        g = q.graph()
        assert len(g) <= 40
        assert "has_tags" not in g.relations
        assert "[" not in q.question
        assert all(g.has_entity(a) for a in q.answers)
        assert q.gold_chain and all(t in g for t in q.gold_chain)
        hops = int(q.type[0])
        assert len(q.extra["relation_chain"]) == hops
    # deterministic: the same command gives the same file
    out2 = tmp_path / "mq2.jsonl"
    datasets_main(["metaqa", "--hops", "1,2", "--n", "6", "--max-triplets", "40", "--seed", "3", "--out", str(out2)])
    assert out.read_bytes() == out2.read_bytes()


def test_sample_is_reproducible_by_its_command(tmp_path, sample_path):
    out = tmp_path / "s.jsonl"
    datasets_main(["metaqa", "--hops", "1,2", "--n", "50", "--max-triplets", "200", "--seed", "0", "--out", str(out)])
    assert out.read_bytes() == sample_path.read_bytes()


def test_bad_arguments_are_clear(tmp_path, capsys):
    with pytest.raises(MetaQAError, match="--hops must be 1 and/or 2"):
        build_metaqa(hops=[3], n=2)
    assert datasets_main(["metaqa", "--data-dir", str(tmp_path), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "MetaQA KB not found" in capsys.readouterr().err


def test_full_kb_questions_share_one_graph_file_with_every_relation(tmp_path, capsys):
    out = tmp_path / "full" / "kb_questions.jsonl"
    args = ["metaqa", "--full-kb", "--hops", "1,2,3", "--n", "6", "--seed", "1", "--out", str(out)]
    assert datasets_main(args) == 0
    assert "kept 2 1-hop, 2 2-hop, 2 3-hop" in capsys.readouterr().out
    ds = load_dataset(out)
    assert [q.type for q in ds] == ["1hop"] * 2 + ["2hop"] * 2 + ["3hop"] * 2
    graphs = [q.graph() for q in ds]
    assert all(g is graphs[0] for g in graphs), "the whole KB must be loaded once and shared"
    g = graphs[0]
    assert len(g) == 133582 and "has_tags" in g.relations
    for q in ds:
        assert all(g.has_entity(t) for t in q.topic_entities)
        assert all(g.has_entity(a) for a in q.answers)
    # a second build into the same folder reuses the KB copy and gives the same file
    first = out.read_bytes()
    assert datasets_main(args) == 0
    assert out.read_bytes() == first


def test_full_kb_shipped_dataset_is_reproducible(tmp_path):
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[2] / "datasets" / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl"
    out = tmp_path / "f.jsonl"
    datasets_main(["metaqa", "--full-kb", "--hops", "1,2,3", "--n", "90", "--seed", "0", "--out", str(out)])
    assert out.read_bytes() == shipped.read_bytes()
