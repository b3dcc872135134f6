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
