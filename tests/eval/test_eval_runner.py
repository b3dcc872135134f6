"""The batch runner: traces, results, summary, errors recorded, resumable; and the CLI."""

import argparse
import json

import pytest

from kgqa_core.eval.cli import add_eval_parser, run_eval_command
from kgqa_core.eval.runner import EvalConfigError, load_results, run_eval
from kgqa_core.trace.schema import load_trace


def test_run_writes_traces_results_summary_and_survives_a_crash(tmp_path, small_dataset, fake_method, fake_model):
    out = tmp_path / "out"
    s = run_eval(small_dataset, ["fake"], "fake-model", out, progress=False, model=fake_model, n_boot=100)
    assert s.ran == 3 and s.skipped == 0 and s.failed == 1
    recs = {r["id"]: r for r in load_results(out)}
    assert set(recs) == {"q1", "q2", "q3"}
    # q1: first neighbour of Heat is Michael Mann -> correct, chain matches the gold chain
    assert recs["q1"]["metrics"]["hits1"] == 1.0 and recs["q1"]["metrics"]["triplet_f1"] == 1.0
    assert recs["q1"]["metrics"]["error_class"] == "C1"
    # the runner checked the cited chain against the graph (the fake method did not)
    assert recs["q1"]["metrics"]["cited_triplets"] == 1 and recs["q1"]["metrics"]["ill_triplets"] == 0
    assert recs["q2"]["metrics"]["hits1"] == 0.0 and recs["q2"]["metrics"]["error_class"] == "E1"
    # the crash on q3 is recorded on its trace, and the run went on
    assert "exploded" in recs["q3"]["error"]
    crashed = load_trace(out / recs["q3"]["trace"])
    assert "RuntimeError" in crashed.error and "traceback" in crashed.extra
    ok = load_trace(out / recs["q1"]["trace"])
    assert ok.answer_texts == ["Michael Mann"] and ok.model == "fake-model"
    summary = json.loads((out / "summary.json").read_text())
    overall = summary["overall"][0]
    assert overall["method"] == "fake" and overall["n"] == 3
    assert overall["hits1"]["value"] == pytest.approx(1 / 3)
    assert {g["type"] for g in summary["by_type"]} == {"1hop", "2hop"}
    assert "fake" in s.table() and "per question type" in s.table()


def test_rerun_skips_done_pairs_and_limit_extends(tmp_path, small_dataset, fake_method, fake_model):
    out = tmp_path / "out"
    run_eval(small_dataset, ["fake"], "x", out, limit=2, progress=False, model=fake_model, n_boot=50)
    assert len(fake_method) == 2
    again = run_eval(small_dataset, ["fake"], "x", out, limit=2, progress=False, model=fake_model, n_boot=50)
    assert again.ran == 0 and again.skipped == 2 and len(fake_method) == 2  # nothing re-ran
    more = run_eval(small_dataset, ["fake"], "x", out, progress=False, model=fake_model, n_boot=50)
    assert more.ran == 1 and more.skipped == 2 and len(fake_method) == 3
    assert len(load_results(out)) == 3


def test_interrupted_last_line_is_rerun(tmp_path, small_dataset, fake_method, fake_model):
    out = tmp_path / "out"
    run_eval(small_dataset, ["fake"], "x", out, progress=False, model=fake_model, n_boot=50)
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])  # torn write
    s = run_eval(small_dataset, ["fake"], "x", out, progress=False, model=fake_model, n_boot=50)
    assert s.ran == 1 and len(s.records) == 3


def test_other_model_in_same_out_dir_is_refused(tmp_path, small_dataset, fake_method, fake_model):
    out = tmp_path / "out"
    run_eval(small_dataset, ["fake"], "x", out, limit=1, progress=False, model=fake_model, n_boot=50)
    with pytest.raises(EvalConfigError, match="different model"):
        run_eval(small_dataset, ["fake"], "other-model", out, limit=1, progress=False, n_boot=50)
    with pytest.raises(EvalConfigError, match="different parameters"):
        run_eval(small_dataset, ["fake"], "x", out, limit=1, params={"beam_size": 3}, progress=False,
                 model=fake_model, n_boot=50)


def _args(*argv):
    parser = argparse.ArgumentParser()
    add_eval_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["eval", *argv])


def test_cli_unknown_method_is_one_clear_line(tmp_path, small_dataset, capsys):
    code = run_eval_command(_args("--dataset", str(small_dataset), "--methods", "dog,nope", "--out", str(tmp_path)))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: unknown method 'nope'; choose from: dog, cot")
    assert len(err.strip().splitlines()) == 1


def test_cli_bad_dataset_reports_lines(tmp_path, jsonl, fake_method, capsys):
    path = jsonl(['{"id": 1}', "oops"])
    code = run_eval_command(_args("--dataset", str(path), "--methods", "fake", "--out", str(tmp_path / "o")))
    err = capsys.readouterr().err
    assert code == 2 and "2 bad lines" in err and "line 2: not valid JSON" in err and "Traceback" not in err


def test_cli_runs_and_prints_table(tmp_path, small_dataset, fake_method, fake_model, monkeypatch, capsys):
    import kgqa_core.models as models

    monkeypatch.setattr(models, "load_model", lambda name, **kw: fake_model)
    args = _args("--dataset", str(small_dataset), "--methods", "fake", "--beam-size", "2", "--param", "hops=2",
                 "--out", str(tmp_path / "o"), "--no-progress", "--model", "fake-model")
    assert args.func is run_eval_command
    assert run_eval_command(args) == 0
    out = capsys.readouterr().out
    assert "Hits@1" in out and "fake" in out and "ran 3" in out
    run = json.loads((tmp_path / "o" / "run.json").read_text())
    assert run["params"] == {"hops": 2, "beam_size": 2}
    # the same table as Markdown, for docs: nothing re-runs
    args = _args("--dataset", str(small_dataset), "--methods", "fake", "--beam-size", "2", "--param", "hops=2",
                 "--out", str(tmp_path / "o"), "--no-progress", "--model", "fake-model", "--markdown")
    assert run_eval_command(args) == 0
    out = capsys.readouterr().out
    assert "ran 0" in out
    rows = [line for line in out.splitlines() if line.startswith("| fake")]
    assert len(rows) == 3 and all(r.count(" | ") == 12 for r in rows)  # overall + two types, 13 columns


def test_per_type_takes_the_first_questions_of_every_type(tmp_path, small_dataset, fake_method, fake_model):
    # the dataset is sorted 1hop, 1hop, 2hop: --limit 2 would never reach the 2-hop question
    out = tmp_path / "out"
    s = run_eval(small_dataset, ["fake"], "x", out, per_type=1, progress=False, model=fake_model, n_boot=50)
    assert sorted(r["id"] for r in s.records) == ["q1", "q3"]
    assert {g.type for g in s.by_type} == {"1hop", "2hop"}
    # raising the count only adds questions, the finished ones are kept
    more = run_eval(small_dataset, ["fake"], "x", out, per_type=2, progress=False, model=fake_model, n_boot=50)
    assert more.ran == 1 and more.skipped == 2


def test_shards_split_the_questions_and_a_final_run_summarises_all(tmp_path, small_dataset, fake_method, fake_model):
    out = tmp_path / "out"
    a = run_eval(small_dataset, ["fake"], "x", out, shard=(1, 2), progress=False, model=fake_model, n_boot=50)
    b = run_eval(small_dataset, ["fake"], "x", out, shard=(2, 2), progress=False, model=fake_model, n_boot=50)
    assert (a.ran, b.ran) == (2, 1)  # q1, q3 | q2: disjoint, nothing run twice
    assert len(fake_method) == 3
    final = run_eval(small_dataset, ["fake"], "x", out, progress=False, model=fake_model, n_boot=50)
    assert final.ran == 0 and len(final.records) == 3
    assert len((out / "results.jsonl").read_text().splitlines()) == 3
    with pytest.raises(ValueError, match="shard"):
        run_eval(small_dataset, ["fake"], "x", out, shard=(3, 2), progress=False, model=fake_model)


def test_cli_rejects_a_malformed_shard(tmp_path, small_dataset, capsys):
    args = _args("--dataset", str(small_dataset), "--methods", "direct", "--shard", "two",
                 "--out", str(tmp_path / "o"), "--no-progress")
    assert run_eval_command(args) == 2
    assert "--shard must look like K/N" in capsys.readouterr().err


def test_types_runs_one_kind_first_and_a_full_run_adds_the_rest(tmp_path, small_dataset, fake_method, fake_model, capsys):
    from kgqa_core.eval.runner import UnknownQuestionTypeError

    out = tmp_path / "out"
    s = run_eval(small_dataset, ["fake"], "x", out, types=["2hop"], progress=False, model=fake_model, n_boot=50)
    assert [r["id"] for r in s.records] == ["q3"] and [g.type for g in s.by_type] == ["2hop"]
    full = run_eval(small_dataset, ["fake"], "x", out, progress=False, model=fake_model, n_boot=50)
    assert full.ran == 2 and full.skipped == 1 and sorted(r["id"] for r in full.records) == ["q1", "q2", "q3"]
    with pytest.raises(UnknownQuestionTypeError, match="'3hop'.*1hop, 2hop"):
        run_eval(small_dataset, ["fake"], "x", out, types=["3hop"], progress=False, model=fake_model)
    args = _args("--dataset", str(small_dataset), "--methods", "fake", "--types", "3hop", "--out", str(out),
                 "--no-progress", "--model", "fake-model")
    assert run_eval_command(args) == 2
    assert "no question has type '3hop'" in capsys.readouterr().err
