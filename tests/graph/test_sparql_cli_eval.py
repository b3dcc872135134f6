"""The SPARQL store from the command line (--sparql) and from eval datasets (a "sparql" record)."""

from __future__ import annotations

import json

import pytest

from kgqa_core.cli import main
from kgqa_core.eval.dataset import DatasetFormatError, parse_dataset
from kgqa_core.graph.sparql.local_server import free_port
from kgqa_core.trace.schema import load_trace


def test_ask_with_sparql_flags(oxigraph_endpoints, tmp_path, capsys):
    out = tmp_path / "t.json"
    code = main(["ask", "--sparql", oxigraph_endpoints["freebase"], "--dialect", "freebase",
                 "--question", "Who directed The Matrix?", "--method", "direct",
                 "--param", "max_new_tokens=12", "--trace-out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "topic entity (linked in the store): The Matrix" in captured.err
    assert "graph store:" in captured.out and "queries" in captured.out
    trace = load_trace(out)
    assert trace.graph_queries > 0 and trace.extra["graph_store"]["dialect"] == "freebase"
    assert ["The Matrix", "film.film.directed_by", "Lana Wachowski"] in trace.extra["fetched_graph"]


@pytest.mark.parametrize("args, message", [
    (["--graph", "g.tsv", "--sparql", "http://127.0.0.1:1/q"], "exactly one of --graph FILE or --sparql URL"),
    ([], "exactly one of --graph FILE or --sparql URL"),
    (["--sparql", "ftp://example.org/q"], "is not an http:// or https:// URL"),
    (["--sparql", "http://127.0.0.1:9/q", "--sparql-hops", "0"], "argument --sparql-hops: must be at least 1"),
])
def test_bad_store_flags_are_one_line_errors(args, message, capsys):
    # a flag's value out of range is refused by the parser, naming the flag (usage error, exit 2)
    usage = any(a.startswith("--sparql-") for a in args)
    assert main(["ask", *args, "--question", "q", "--method", "direct", "--topic", "x"]) == (2 if usage else 1)
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unknown_topic_and_unreachable_store(oxigraph_endpoints, capsys):
    assert main(["ask", "--sparql", oxigraph_endpoints["freebase"], "--dialect", "freebase", "--question", "q",
                 "--method", "direct", "--topic", "The Matrixx"]) == 1
    assert "not in the store (did you mean 'The Matrix'" in capsys.readouterr().err
    url = f"http://127.0.0.1:{free_port()}/query"
    assert main(["ask", "--sparql", url, "--question", "q", "--method", "direct", "--topic", "x",
                 "--sparql-timeout", "2"]) == 1
    assert f"cannot reach SPARQL endpoint {url}" in capsys.readouterr().err


def test_dataset_lines_may_name_an_endpoint(oxigraph_endpoints, tmp_path):
    from kgqa_core.eval.runner import run_eval

    url = oxigraph_endpoints["freebase"]
    lines = [
        {"id": "q1", "question": "Who directed The Matrix?", "topic_entities": ["The Matrix"],
         "answers": ["Lana Wachowski"], "sparql": {"endpoint": url, "dialect": "freebase"}},
        {"id": "q2", "question": "Who directed Speed?", "topic_entities": ["Speed"],
         "answers": ["Jan de Bont"], "sparql": {"endpoint": url, "dialect": "freebase"}},
    ]
    path = tmp_path / "store.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    ds = parse_dataset(path.read_text(), str(path), base_dir=tmp_path, path=path)
    assert ds[0].graph() is ds[1].graph()  # one store, one cache for the dataset
    assert ds[0].to_dict()["sparql"]["endpoint"] == url
    summary = run_eval(path, ["direct"], "smollm2-135m", tmp_path / "out", params={"max_new_tokens": 12},
                       progress=False)
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert summary is not None and [r["id"] for r in rows] == ["q1", "q2"] and not any(r["error"] for r in rows)
    traces = [load_trace(tmp_path / "out" / r["trace"]) for r in rows]
    assert all(t.graph_queries > 0 and t.extra["fetched_graph"] for t in traces)
    assert traces[1].extra["graph_store"]["cache_hits"] > 0  # Action, shared with q1, came from the cache


@pytest.mark.parametrize("value, message", [
    ("ftp://x/q", "is not an http"),
    ({"endpoint": "http://h/q", "dialect": "dbpedia"}, "unknown SPARQL dialect"),
    ({"endpoint": "http://h/q", "colour": "red"}, "unknown field(s) colour"),
    ({"dialect": "rdf"}, "needs an 'endpoint'"),
    (42, "must be an endpoint URL"),
])
def test_bad_sparql_records_name_the_line(value, message):
    line = {"id": "q", "question": "x?", "topic_entities": [], "answers": ["a"], "sparql": value}
    with pytest.raises(DatasetFormatError) as err:
        parse_dataset(json.dumps(line) + "\n", "ds.jsonl")
    assert "line 1" in str(err.value) and message in str(err.value)


def test_graph_and_sparql_together_are_refused():
    line = {"id": "q", "question": "x?", "answers": ["a"], "graph": [["a", "r", "b"]], "sparql": "http://h/q"}
    with pytest.raises(DatasetFormatError, match="one of 'graph', 'graph_file' or 'sparql'"):
        parse_dataset(json.dumps(line) + "\n", "ds.jsonl")
