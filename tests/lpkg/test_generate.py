"""Question generation: dataset lines with complete answers, loadable by the evaluation loader."""

import argparse
import json

import pytest

from kgqa_core.eval.dataset import load_dataset, parse_dataset
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.lpkg.cli import add_generate_parser, run_generate_command
from kgqa_core.lpkg.generate import GenerationError, generate_questions
from kgqa_core.lpkg.patterns import PATTERNS, evaluate, ground_patterns
from kgqa_core.lpkg.verbalise import ModelVerbaliser, TemplateVerbaliser

from lpkg_fixtures import PATTERN_TRIPLETS


def test_generated_lines_are_a_valid_dataset_with_complete_answers(pattern_graph):
    records = generate_questions(pattern_graph, PATTERNS, 18, seed=3)
    assert {r["type"] for r in records} == set(PATTERNS)
    text = "\n".join(json.dumps(r) for r in records)
    dataset = parse_dataset(text, "generated.jsonl")
    assert len(dataset) == len(records) and not dataset.warnings
    instances = ground_patterns(pattern_graph, PATTERNS, 18, seed=3)
    for q, inst in zip(dataset, instances):
        assert q.answers == list(inst.answers)
        # the inline neighbourhood holds every path: the answers are the same on it
        sub = q.graph()
        assert set(evaluate(sub, inst)[0]) == set(inst.answers)
        assert all(tuple(t) in PATTERN_TRIPLETS for t in q.gold_chain)
        for anchor in q.topic_entities:
            assert anchor in q.question, "the question names its topic entities"


def test_generation_is_deterministic(pattern_graph):
    a = generate_questions(pattern_graph, "2p,2i", 6, seed=11)
    b = generate_questions(pattern_graph, "2p,2i", 6, seed=11)
    assert a == b
    assert [r["id"] for r in a] == ["2p-001", "2i-001", "2p-002", "2i-002", "2p-003", "2i-003"]


def test_template_sub_questions_carry_placeholders(pattern_graph):
    inst = ground_patterns(pattern_graph, ["2p"], 1, seed=0)[0]
    v = TemplateVerbaliser().verbalise(inst)
    assert inst.branches[0].anchor in v.sub_questions[0]
    assert "{Ans_1}" in v.sub_questions[1]
    inst = ground_patterns(pattern_graph, ["ip"], 1, seed=0)[0]
    assert "{Inter_1}" in TemplateVerbaliser().verbalise(inst).sub_questions[2]


def test_unusable_graph_gives_a_clear_error():
    g = KnowledgeGraph.from_triplets([("a", "r", "b")])
    with pytest.raises(GenerationError, match="no instance of 2i could be grounded"):
        generate_questions(g, "2i", 3)
    with pytest.raises(GenerationError, match="n must be positive"):
        generate_questions(g, "1p", 0)


def _cli(argv):
    parser = argparse.ArgumentParser(prog="kgqa_core")
    add_generate_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_cli_writes_a_dataset_that_references_the_graph(tmp_path, capsys):
    graph_file = tmp_path / "graphs" / "people.tsv"
    graph_file.parent.mkdir()
    graph_file.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in PATTERN_TRIPLETS), encoding="utf-8")
    out = tmp_path / "out" / "questions.jsonl"
    args = _cli(["generate", "--graph", str(graph_file), "--patterns", "2p,2i,compare", "--n", "6",
                 "--seed", "2", "--out", str(out)])
    assert args.func(args) == 0
    assert "wrote 6 questions" in capsys.readouterr().out
    dataset = load_dataset(out)
    assert len(dataset) == 6
    # a dataset names graph files inside its own folder: the graph was placed beside it
    assert dataset[0].graph_file == (out.parent / "people.tsv").resolve()
    assert dataset[0].graph_file.read_bytes() == graph_file.read_bytes()
    assert len(dataset[0].graph()) == len(PATTERN_TRIPLETS)
    assert set(dataset.types) == {"2p", "2i", "compare"}


def test_cli_reports_bad_input(tmp_path, capsys):
    args = _cli(["generate", "--graph", str(tmp_path / "missing.tsv"), "--out", str(tmp_path / "q.jsonl")])
    assert run_generate_command(args) == 2
    assert "missing.tsv" in capsys.readouterr().err
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n", encoding="utf-8")
    args = _cli(["generate", "--graph", str(bad), "--out", str(tmp_path / "q.jsonl")])
    assert run_generate_command(args) == 2
    assert "bad.tsv" in capsys.readouterr().err
    good = tmp_path / "g.tsv"
    good.write_text("a\tr\tb\n", encoding="utf-8")
    args = _cli(["generate", "--graph", str(good), "--patterns", "2p,9x", "--out", str(tmp_path / "q.jsonl")])
    assert run_generate_command(args) == 2
    assert "unknown pattern(s) 9x" in capsys.readouterr().err
    assert not (tmp_path / "q.jsonl").exists()


def test_model_verbaliser_is_checked_against_the_instance(pattern_graph, small_model):
    verbaliser = ModelVerbaliser(small_model, max_new_tokens=40)
    for inst in ground_patterns(pattern_graph, ["2i"], 1, seed=5):
        v = verbaliser.verbalise(inst)
        assert v.model_output  # the model was asked
        assert v.source == "model" or v.source.startswith("template (model output unusable: ")
        for anchor in inst.anchors:
            assert anchor.casefold() in v.question.casefold()
        assert len(v.sub_questions) == len(inst.sub_queries())
