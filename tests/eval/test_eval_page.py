"""AppTest of pages/evaluate.py: pick the sample, run a (fake) method, see results, open Replay."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "evaluate.py")


@pytest.fixture
def page_env(tmp_path, monkeypatch, fake_method, fake_model):
    import kgqa_core.models as models

    monkeypatch.setenv("KGQA_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(models, "load_model", lambda name, **kw: fake_model)
    return tmp_path / "runs"


def _run_eval(at: AppTest, timeout: float = 120) -> None:
    """Press Run evaluation: it runs in the session's worker thread; wait for it, then let the page collect it."""
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    job = at.session_state["eval_job"]
    assert job.wait(timeout), "the evaluation did not finish in time"
    at.run()


def test_page_renders_sample_and_runs_a_method(page_env):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("50 questions" in c.value for c in at.caption)
    assert any("No results yet" in i.value for i in at.info)
    at.multiselect(key="eval_methods").set_value(["fake"]).run()
    at.number_input(key="eval_limit").set_value(4).run()
    assert any("time estimate" in i.value.lower() or "estimated time" in i.value.lower() for i in at.info)
    _run_eval(at)
    assert not at.exception, at.exception
    assert not at.error
    # summary table + per-question table; 4 questions x 1 method recorded
    results = list((page_env / "eval").glob("*/results.jsonl"))
    assert len(results) == 1 and len(results[0].read_text().splitlines()) == 4
    frames = [d.value for d in at.dataframe]
    assert frames[0]["method"].tolist() == ["fake"]
    assert len(frames[-1]) == 4 and set(frames[-1]["type"]) == {"1hop"}
    assert list(frames[-1].columns[:5]) == ["question", "answers", "gold", "Hits@1", "F1"]  # key columns first
    # after one run the estimate is measured from this evaluation's own questions
    at.run()
    assert any("earlier question(s) of this evaluation" in i.value for i in at.info), [i.value for i in at.info]
    # choosing a question and opening its trace hands the path to Replay
    at.button(key="eval_open_replay").click().run()
    trace_path = Path(at.session_state["replay_trace_path"])
    assert trace_path.is_file() and trace_path.parent.name == "fake"
    # ... and imports it, with its question's graph, into the run store Replay lists
    from kgqa_ui.run_store import RunStore

    runs = RunStore(page_env).list()
    assert len(runs) == 1 and runs[0].method == "fake"
    assert RunStore(page_env).load_graph(RunStore(page_env).load(runs[0].run_id).graph_fingerprint) is not None


def test_page_reports_bad_upload_by_line(page_env):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="eval_source").set_value("A dataset file on disk").run()
    bad = page_env.parent / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    at.text_input(key="eval_path").input(str(bad)).run()
    assert not at.exception
    assert any("line 1" in c.value for c in at.code)


def test_page_generates_questions_from_the_session_graph(page_env):
    pytest.importorskip("kgqa_core.lpkg.cli")
    from kgqa_core.samples import load_sample

    graph = load_sample("metaqa_movies")[0]
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["graph"] = graph
    at.run()
    at.radio(key="eval_source").set_value("Generate from a graph (LPKG patterns)").run()
    at.multiselect(key="eval_gen_patterns").set_value(["1p", "2p"]).run()
    at.number_input(key="eval_gen_n").set_value(4).run()
    at.button(key="eval_gen_go").click().run()
    assert not at.exception and not at.error
    assert any("4 questions" in c.value and "1p" in c.value for c in at.caption)


def test_page_runs_only_the_chosen_question_type(page_env):
    """The sample lists its 25 1-hop questions first; choosing 2hop reaches the others."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.multiselect(key="eval_methods").set_value(["fake"]).run()
    assert at.multiselect(key="eval_types").value == ["1hop", "2hop"]
    at.multiselect(key="eval_types").set_value(["2hop"]).run()
    at.number_input(key="eval_limit").set_value(3).run()
    _run_eval(at)
    assert not at.exception and not at.error
    frames = [d.value for d in at.dataframe]
    assert len(frames[-1]) == 3 and set(frames[-1]["type"]) == {"2hop"}


def test_page_offers_the_whole_kb_benchmark_and_runs_its_three_hop_questions(page_env):
    """Issue 19: the whole-KB dev benchmark is one choice away; its questions share one graph, loaded once."""
    at = AppTest.from_file(PAGE, default_timeout=240).run()
    at.radio(key="eval_source").set_value("MetaQA whole KB (90 questions)").run()
    assert not at.exception and not at.error
    assert any("whole MetaQA KB (133,582 triplets" in c.value for c in at.caption)
    at.multiselect(key="eval_methods").set_value(["fake"]).run()
    # the sample's 1- and 2-hop choice does not carry over: this dataset's types are all chosen
    assert at.multiselect(key="eval_types").value == ["1hop", "2hop", "3hop"]
    assert not at.warning
    at.multiselect(key="eval_types").set_value(["3hop"]).run()
    at.number_input(key="eval_limit").set_value(2).run()
    _run_eval(at)
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    results = list((page_env / "eval").glob("metaqa_dev_full_kb_90-*/results.jsonl"))
    assert len(results) == 1 and len(results[0].read_text().splitlines()) == 2
    frames = [d.value for d in at.dataframe]
    assert len(frames[-1]) == 2 and set(frames[-1]["type"]) == {"3hop"}
    # back to the sample: its own two types again
    at.radio(key="eval_source").set_value("MetaQA sample (50 questions)").run()
    assert at.multiselect(key="eval_types").value == ["1hop", "2hop"] and not at.warning and not at.exception


def _hostile_session_graph():
    """A session graph as the Ask page holds it: an RDF literal kept in quotes, a relation with a line break."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    return KnowledgeGraph.from_triplets([
        ("Heat", "directed_by", "Michael Mann"), ("Collateral", "directed_by", "Michael Mann"),
        ("Heat", "release_year", "1995"), ("Collateral", "release_year", "2004"),
        ("Michael Mann", "born_in", "Chicago"), ("Chicago", "name", '"Chicago"'),
        ("Heat", "tagline\nsecond line", "A Los Angeles crime saga"),
        ("Collateral", "tagline\nsecond line", "It started like any other night"),
    ], name="hostile")


def test_generation_grounds_questions_in_the_session_graph_itself(page_env):
    """No TSV round trip: the dataset's graph is the session graph (same fingerprint), gold chains are its triplets."""
    pytest.importorskip("kgqa_core.lpkg.cli")
    from kgqa_core.eval.dataset import load_dataset

    graph = _hostile_session_graph()
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["graph"] = graph
    at.run()
    at.radio(key="eval_source").set_value("Generate from a graph (LPKG patterns)").run()
    at.multiselect(key="eval_gen_patterns").set_value(["1p", "2p"]).run()
    at.number_input(key="eval_gen_n").set_value(12).run()
    at.button(key="eval_gen_go").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ds = load_dataset(at.session_state["eval_generated_path"])
    assert len(ds) > 0
    for q in ds:
        assert q.graph().fingerprint == graph.fingerprint
        for h, r, t in q.gold_chain:
            assert graph.find(h, r, t) is not None, (h, r, t)
    # the dataset names the graph file it wrote beside itself, never a file of the user's
    assert all(q.graph_file.suffix == ".jsonl" and q.graph_file.parent == Path(ds.path).parent for q in ds)


def test_generation_upload_has_the_ask_pages_limit(page_env, monkeypatch):
    """A small .gz that inflates past KGQA_MAX_UPLOAD_MB is refused while it inflates, naming the file as text."""
    import gzip

    monkeypatch.setenv("KGQA_MAX_UPLOAD_MB", "1")
    bomb = gzip.compress(b"a\tb\tc\n" * 600_000)  # 3.6 MB of TSV in a few kB
    assert len(bomb) < 64 * 1024
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="eval_source").set_value("Generate from a graph (LPKG patterns)").run()
    uploader = at.file_uploader(key="eval_gen_graph")
    assert "up to 1 MB" in uploader.label and uploader.proto.max_upload_size_mb == 1
    uploader.upload("bomb `x`.tsv.gz", bomb, "application/gzip").run()
    assert not at.exception
    assert [e.value for e in at.error] == ["bomb \\`x\\`\\.tsv\\.gz\\: file too large\\: decompresses to more than "
                                          "the limit of 1\\.0 MB"]
