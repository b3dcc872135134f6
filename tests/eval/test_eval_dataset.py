"""Dataset loading: valid files load, every bad line is reported by number."""

import json

import pytest

from kgqa_core.eval.dataset import DatasetFormatError, load_dataset, parse_dataset, write_dataset

GOOD = {"id": "a", "question": "who directed Heat", "topic_entities": ["Heat"], "answers": ["Michael Mann"],
        "graph": [["Heat", "directed_by", "Michael Mann"]]}


def test_good_file_loads_and_builds_graph(jsonl):
    ds = load_dataset(jsonl([GOOD, {**GOOD, "id": "b", "type": "1hop", "gold_chain": [["Heat", "directed_by", "Michael Mann"]]}]))
    assert len(ds) == 2 and ds.types == ["1hop"]
    g = ds.by_id("a").graph()
    assert len(g) == 1 and g.has_entity("Heat")
    assert ds.by_id("b").gold_chain == [("Heat", "directed_by", "Michael Mann")]


def test_every_bad_line_is_reported_by_number(jsonl):
    rows = [
        GOOD,                                             # 1 ok
        "{not json",                                      # 2
        {**GOOD, "id": "c", "answers": []},               # 3 empty answers
        "",                                               # 4 blank: skipped
        {**GOOD, "id": "d", "graph": [["only", "two"]]},  # 5 bad triplet
        {**GOOD, "id": "a"},                              # 6 duplicate id
        {k: v for k, v in GOOD.items() if k != "graph"} | {"id": "e"},  # 7 no graph
        [1, 2, 3],                                        # 8 not an object
    ]
    path = jsonl(rows)
    with pytest.raises(DatasetFormatError) as err:
        load_dataset(path)
    exc = err.value
    assert exc.bad_lines == [2, 3, 5, 6, 7, 8]
    msg = str(exc)
    assert str(path) in msg and "6 bad lines" in msg
    assert "line 2: not valid JSON" in msg
    assert "line 3: 'answers' is empty" in msg
    assert "line 6: duplicate id 'a' (first used on line 1)" in msg
    assert "line 7: missing 'graph'" in msg


def test_graph_file_is_relative_and_shared(tmp_path):
    (tmp_path / "kg").mkdir()
    (tmp_path / "kg" / "movies.tsv").write_text("Heat\tdirected_by\tMichael Mann\nHeat\tstarred_actors\tAl Pacino\n")
    rows = [{**{k: v for k, v in GOOD.items() if k != "graph"}, "id": str(i), "graph_file": "kg/movies.tsv"} for i in range(3)]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    ds = load_dataset(path)
    graphs = [q.graph() for q in ds]
    assert len(graphs[0]) == 2
    assert graphs[0] is graphs[1] is graphs[2]  # loaded once per file


def test_missing_graph_file_and_upload_without_base_dir(jsonl):
    row = {**{k: v for k, v in GOOD.items() if k != "graph"}, "graph_file": "nowhere.tsv"}
    with pytest.raises(DatasetFormatError, match="line 1: graph_file 'nowhere.tsv' not found"):
        load_dataset(jsonl([row]))
    with pytest.raises(DatasetFormatError, match="uploaded dataset must carry 'graph' inline"):
        parse_dataset(json.dumps(row).encode(), "upload.jsonl")


def test_empty_missing_and_non_utf8_files(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(DatasetFormatError, match="no questions"):
        load_dataset(tmp_path / "empty.jsonl")
    with pytest.raises(DatasetFormatError, match="file not found"):
        load_dataset(tmp_path / "missing.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(DatasetFormatError, match="not UTF-8"):
        load_dataset(tmp_path / "bin.jsonl")


def test_write_then_load_round_trips(tmp_path, jsonl):
    ds = load_dataset(jsonl([GOOD | {"source": "x"}]))
    out = write_dataset(ds.questions, tmp_path / "copy.jsonl")
    again = load_dataset(out)
    assert again[0].to_dict() == ds[0].to_dict()
    assert again[0].extra == {"source": "x"}


def test_shipped_sample_is_valid(sample_path):
    ds = load_dataset(sample_path)
    assert len(ds) == 50
    assert ds.types == ["1hop", "2hop"]
    assert sum(q.type == "1hop" for q in ds) == 25
    for q in ds:
        g = q.graph()
        assert len(g) <= 200
        assert all(g.has_entity(t) for t in q.topic_entities)
        assert all(g.has_entity(a) for a in q.answers), q.id  # every gold answer is reachable
