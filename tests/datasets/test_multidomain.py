"""The multi-domain dev benchmark (datasets/multidomain/): the shipped files, and the builders on tiny raw fixtures.

The committed files are checked with the project's own loaders: every question loads, names graph nodes,
and has its gold answers within its hop count of a topic entity.  Each builder is run twice on a few raw
lines written in its source's format (no dependency on ../shared/data) and must give the same bytes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgqa_core.datasets.__main__ import main as datasets_main
from kgqa_core.eval.dataset import load_dataset
from kgqa_core.graph.loaders import load_graph

ROOT = Path(__file__).resolve().parents[2]
MULTIDOMAIN = ROOT / "datasets" / "multidomain"
SHIPPED = sorted(MULTIDOMAIN.glob("*_dev.jsonl"))
FRESH = MULTIDOMAIN / "dbpedia_fresh.jsonl"  # held-out DBpedia questions over the dev graph (README)
FRESH2 = MULTIDOMAIN / "dbpedia_fresh2.jsonl"  # a second held-out sample, none of the two files before it (README)


def _within(graph, topics, hops):
    seen = set(topics)
    frontier = set(topics)
    for _ in range(hops):
        nxt = set()
        for node in frontier:
            for t in graph.neighbours(node):
                nxt.update((t.head, t.tail))
        frontier = nxt - seen
        seen |= frontier
    return seen


# ------------------------------------------------------------------ the committed benchmark
def test_every_domain_is_shipped_with_its_graph_and_readme():
    assert {p.name for p in SHIPPED} >= {"dbpedia_dev.jsonl", "geography_dev.jsonl", "wikidata_dev.jsonl"}
    readme = (MULTIDOMAIN / "README.md").read_text(encoding="utf-8")
    for path in SHIPPED:
        domain = path.name.removesuffix("_dev.jsonl")
        assert (MULTIDOMAIN / f"{domain}_kb.tsv.gz").is_file()
        assert path.name in readme and f"{domain}_kb.tsv.gz" in readme
    total = sum(p.stat().st_size for p in MULTIDOMAIN.iterdir())
    assert total < 10 * 1024 * 1024


@pytest.mark.parametrize("path", [*SHIPPED, FRESH, FRESH2], ids=[p.stem for p in [*SHIPPED, FRESH, FRESH2]])
def test_shipped_questions_are_fair_over_their_whole_domain_graph(path):
    ds = load_dataset(path)
    assert len(ds) >= 40
    graph_files = {q.graph_file for q in ds}
    assert len(graph_files) == 1, "every question of a domain is asked over the same graph"
    graph = ds[0].graph()
    assert 500 <= len(graph) <= 20_000
    for q in ds:
        assert q.type.endswith("hop") and int(q.type[:-3]) >= 1, q.id
        hops = int(q.type[:-3])
        assert q.topic_entities, q.id
        for name in [*q.topic_entities, *q.answers]:
            assert graph.has_entity(name), f"{q.id}: {name!r} is not a node of {q.graph_file.name}"
        reach = _within(graph, q.topic_entities, hops)
        missing = [a for a in q.answers if a not in reach]
        assert not missing, f"{q.id}: answers {missing[:3]} are not within {hops} hops"
        assert q.gold_chain, q.id
        assert all(t in graph for t in q.gold_chain), q.id
        assert len(q.extra["relation_chain"]) == hops, q.id
        assert q.extra["source"], q.id


def test_the_fresh_dbpedia_questions_are_new_questions_over_the_dev_graph():
    dev, fresh = load_dataset(MULTIDOMAIN / "dbpedia_dev.jsonl"), load_dataset(FRESH)
    assert {q.graph_file for q in fresh} == {dev[0].graph_file}
    assert not {q.id for q in fresh} & {q.id for q in dev}
    assert not {q.question for q in fresh} & {q.question for q in dev}
    assert sorted(q.type for q in fresh) == ["2hop"] * 30 + ["3hop"] * 30
    assert "dbpedia_fresh.jsonl" in (MULTIDOMAIN / "README.md").read_text(encoding="utf-8")


def test_the_second_fresh_sample_holds_none_of_the_questions_before_it():
    """`dbpedia_fresh2.jsonl` was sampled after the first fresh file had been used to build a switch: a held-out
    check is only held out while none of its questions (nor their paraphrases' wording) was seen."""
    before = [*load_dataset(MULTIDOMAIN / "dbpedia_dev.jsonl"), *load_dataset(FRESH)]
    second = load_dataset(FRESH2)
    assert {q.graph_file for q in second} == {before[0].graph_file}
    assert not {q.id for q in second} & {q.id for q in before}
    assert not {q.question for q in second} & {q.question for q in before}
    assert sorted(q.type for q in second) == ["2hop"] * 30 + ["3hop"] * 30
    assert "dbpedia_fresh2.jsonl" in (MULTIDOMAIN / "README.md").read_text(encoding="utf-8")


def test_ids_are_unique_across_the_benchmark():
    ids = [q.id for path in SHIPPED for q in load_dataset(path)]
    assert len(ids) == len(set(ids))


# ------------------------------------------------------------------ MLPQ
def _mlpq_raw(tmp_path: Path) -> Path:
    en, fr = "http://dbpedia.org/resource/", "http://fr.dbpedia.org/resource/"
    enp, frp = "http://dbpedia.org/property/", "http://fr.dbpedia.org/property/"
    raw = tmp_path / "mlpq"
    raw.mkdir()
    two = [
        f"who is before the successor of Alpha_Town?@@@<{en}Alpha_Town> <{enp}successor> <{en}Bob_Smith> "
        f"<{fr}Bob_Smith> <{frp}prédécesseur> <{fr}Carl_Jones>",
        f"who comes before the one after Alpha_Town?@@@<{en}Alpha_Town> <{enp}successor> <{en}Bob_Smith> "
        f"<{fr}Bob_Smith> <{frp}prédécesseur> <{fr}Carl_Jones>",  # a paraphrase: dropped
        f"which region is Ville_Rose in?@@@<{fr}Ville_Rose> <{frp}région> <{fr}Pays_Bleu> "
        f"<{en}Blue_Land> <{enp}capital> <{en}Alpha_Town>",  # French topic entity: dropped
        f"what is the capital of the region of Delta_Point?@@@<{en}Delta_Point> <{enp}region> <{en}Blue_Land> "
        f"<{fr}Pays_Bleu> <{frp}capitale> <{fr}Ville_Rose>",
    ]
    three = [
        f"what is the party of the legislature of the stadium that Cup_2001 takes place?@@@<{en}Cup_2001> "
        f"<{enp}stadium> <{en}Nowhere> <{en}Nowhere> <{enp}legislature> <{en}Congress_X> <{fr}Congrès_X> "
        f"<{frp}parti> <{fr}Les_Bleus>",
    ]
    (raw / "dev_en_fr_2h_en.txt").write_text("\n".join(two) + "\n", encoding="utf-8")
    (raw / "dev_en_fr_3h_en.txt").write_text("\n".join(three) + "\n", encoding="utf-8")
    (raw / "fr_en_alignment_extracted").write_text("Les_Bleus&&&The_Blues\nRien&&&Nothing\n", encoding="utf-8")
    return raw


def test_mlpq_builder_is_deterministic_and_merges_cross_lingual_links(tmp_path, capsys):
    raw = _mlpq_raw(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert datasets_main(["mlpq", "--raw", str(raw), "--out", str(a), "--n", "5"]) == 0
    out = capsys.readouterr().out
    assert "kept 2 2hop, 1 3hop" in out and "(a paraphrase)" in out and "not an English DBpedia entity" in out
    assert datasets_main(["mlpq", "--raw", str(raw), "--out", str(b), "--n", "5"]) == 0
    for name in ("dbpedia_dev.jsonl", "dbpedia_kb.tsv.gz"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

    ds = load_dataset(a / "dbpedia_dev.jsonl")
    by_id = {q.id: q for q in ds}
    q = by_id["mlpq-en_fr-dev-2hop-00001"]
    assert q.question == "who is before the successor of Alpha Town?"
    assert q.topic_entities == ["Alpha Town"] and q.answers == ["Carl Jones"]
    assert q.gold_chain == [("Alpha Town", "successor", "Bob Smith"), ("Bob Smith", "prédécesseur", "Carl Jones")]
    three = by_id["mlpq-en_fr-dev-3hop-00001"]
    # the cross-lingual link and the inter-language link file both name the French entities in English
    assert three.answers == ["The Blues"]
    assert ("Congress X", "parti", "The Blues") in three.graph()
    graph = load_graph(a / "dbpedia_kb.tsv.gz")
    assert "Ville Rose" in graph.entities and "Pays Bleu" not in graph.entities  # Pays_Bleu is Blue_Land


# ------------------------------------------------------------------ GeoQuery
_GEO_SCHEMA = """
CREATE TABLE state (state_name text, population int, area double, country_name varchar(3), capital text,
                    density double);
CREATE TABLE city (city_name text, population int, country_name varchar(3), state_name text);
CREATE TABLE border_info (state_name text, border text);
CREATE TABLE river (river_name text, length int, country_name varchar(3), traverse text);
CREATE TABLE lake (lake_name text, area double, country_name varchar(3), state_name text);
CREATE TABLE mountain (mountain_name text, mountain_altitude int, country_name varchar(3), state_name text);
CREATE TABLE highlow (state_name text, highest_elevation text, lowest_point text, highest_point text,
                      lowest_elevation text);
INSERT INTO state VALUES ('texas', 14229000, 691000.0, 'usa', 'austin', 20.6),
                         ('oklahoma', 3025000, 181000.0, 'usa', 'oklahoma city', 16.7),
                         ('new mexico', 1303000, 315000.0, 'usa', 'santa fe', 4.1);
INSERT INTO city VALUES ('austin', 345496, 'usa', 'texas'), ('houston', 1595138, 'usa', 'texas'),
                        ('oklahoma city', 403213, 'usa', 'oklahoma');
INSERT INTO border_info VALUES ('texas', 'oklahoma'), ('oklahoma', 'texas'), ('texas', 'new mexico'),
                               ('new mexico', 'texas');
INSERT INTO river VALUES ('red', 2076, 'usa', 'texas'), ('red', 2076, 'usa', 'oklahoma');
INSERT INTO highlow VALUES ('texas', '2667', 'gulf of mexico', 'guadalupe peak', '0');
"""


def _geoquery_raw(tmp_path: Path) -> Path:
    raw = tmp_path / "geoquery"
    raw.mkdir()
    con = sqlite3.connect(raw / "geography-db.added-in-2020.sqlite")
    con.executescript(_GEO_SCHEMA)
    con.commit()
    con.close()
    capitals_sql = ('SELECT STATEalias0.CAPITAL FROM BORDER_INFO AS BORDER_INFOalias0 , STATE AS STATEalias0 '
                    'WHERE BORDER_INFOalias0.STATE_NAME = "state_name0" AND '
                    'STATEalias0.STATE_NAME = BORDER_INFOalias0.BORDER ;')
    data = [
        {"sql": [capitals_sql], "sentences": [
            {"question-split": "train", "text": "what are the capitals of states that border state_name0",
             "variables": {"state_name0": "texas"}}]},
        {"sql": ['SELECT BORDER_INFOalias0.BORDER FROM BORDER_INFO AS BORDER_INFOalias0 '
                 'WHERE BORDER_INFOalias0.STATE_NAME = "state_name0" ;'], "sentences": [
            {"question-split": "dev", "text": "what states border state_name0", "variables": {"state_name0": "texas"}}]},
        {"sql": ['SELECT STATEalias0.CAPITAL FROM STATE AS STATEalias0 '
                 'WHERE STATEalias0.STATE_NAME = "state_name0" ;'],
         "sentences": [{"question-split": "test", "text": "what is the capital of state_name0",
                        "variables": {"state_name0": "oklahoma"}}]},
    ]
    (raw / "geography.json").write_text(json.dumps(data), encoding="utf-8")
    prolog = [
        "parse([what,are,the,capitals,of,states,that,border,texas,?], "
        "answer(A,(capital(A),loc(A,B),state(B),next_to(B,C),const(C,stateid(texas))))).",
        "parse([what,states,border,texas,?], answer(A,(state(A),next_to(A,B),const(B,stateid(texas))))).",
        "parse([what,is,the,capital,of,oklahoma,?], answer(A,(capital(A),loc(A,B),const(B,stateid(oklahoma))))).",
        "parse([what,is,the,largest,city,in,texas,?], "
        "answer(A,largest(A,(city(A),loc(A,B),const(B,stateid(texas)))))).",
    ]
    (raw / "geography-polog.txt").write_text("\n".join(prolog) + "\n", encoding="utf-8")
    return raw


def test_geoquery_builder_keeps_train_dev_path_questions_checked_by_their_sql(tmp_path, capsys):
    raw = _geoquery_raw(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert datasets_main(["geoquery", "--raw", str(raw), "--out", str(a)]) == 0
    out = capsys.readouterr().out
    assert "kept 1 1hop, 1 2hop" in out and "test split" in out and "split unknown" in out
    assert datasets_main(["geoquery", "--raw", str(raw), "--out", str(b)]) == 0
    for name in ("geography_dev.jsonl", "geography_kb.tsv.gz"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

    ds = load_dataset(a / "geography_dev.jsonl")
    two = next(q for q in ds if q.type == "2hop")
    assert two.question == "what are the capitals of states that border texas"
    assert two.topic_entities == ["texas"]
    assert two.answers == ["oklahoma city, oklahoma", "santa fe, new mexico"]  # santa fe: a capital not in `city`
    assert two.extra["relation_chain"] == ["borders^-1", "capital"]
    one = next(q for q in ds if q.type == "1hop")
    assert one.answers == ["new mexico", "oklahoma"]
    g = two.graph()
    assert ("red river", "flows through", "oklahoma") in g and ("guadalupe peak", "elevation", "2667") in g


# ------------------------------------------------------------------ MQuAKE
def _mquake_raw(tmp_path: Path) -> Path:
    raw = tmp_path / "mquake"
    raw.mkdir()

    def case(cid, song, song_id):
        return {
            "case_id": cid,
            "requested_rewrite": [{"prompt": "{} was performed by", "subject": song,
                                   "target_new": {"str": "Madonna", "id": "Q1744"},
                                   "target_true": {"str": "The Beatles", "id": "Q1299"}}],
            "questions": [f"Which country is the performer of {song} from?", "Where is the band from?"],
            "answer": "United Kingdom",
            "new_answer": "United States of America",
            "single_hops": [{"question": f"Who performed {song}?", "answer": "The Beatles"},
                            {"question": "What is the country of origin of The Beatles?",
                             "answer": "United Kingdom"}],
            "orig": {"triples": [[song_id, "P175", "Q1299"], ["Q1299", "P495", "Q145"]],
                     "triples_labeled": [[song, "performer", "The Beatles"],
                                         ["The Beatles", "country of origin", "United Kingdom"]],
                     "new_triples_labeled": [[song, "performer", "Madonna"]]},
        }

    cases = [case(2, "Yesterday", "Q193477"), case(1, "Hey Jude", "Q607742"), case(3, "Hey Jude", "Q999")]
    (raw / "MQuAKE-hard.json").write_text(json.dumps(cases), encoding="utf-8")
    return raw


def test_mquake_builder_uses_true_facts_only_and_is_deterministic(tmp_path, capsys):
    raw = _mquake_raw(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert datasets_main(["mquake", "--raw", str(raw), "--out", str(a)]) == 0
    assert "kept 4 1hop, 3 2hop" in capsys.readouterr().out  # one single-hop fact per (subject, relation)
    assert datasets_main(["mquake", "--raw", str(raw), "--out", str(b)]) == 0
    for name in ("wikidata_dev.jsonl", "wikidata_kb.tsv.gz"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

    ds = load_dataset(a / "wikidata_dev.jsonl")
    graph = ds[0].graph()
    assert "Madonna" not in graph.entities  # the counterfactual edits never enter the graph
    assert {"Hey Jude (Q607742)", "Hey Jude (Q999)"} <= set(graph.entities)  # one label, two items
    two = {q.id: q for q in ds}["mquake-hard-2-2hop"]
    assert two.question == "Which country is the performer of Yesterday from?"
    assert two.answers == ["United Kingdom"]
    assert two.extra["relation_chain"] == ["performer", "country of origin"]


# ------------------------------------------------------------------ 2WikiMultihopQA
def _twowiki_raw(tmp_path: Path) -> Path:
    raw = tmp_path / "2wikimultihopqa"
    raw.mkdir()

    def rec(rid, qtype, question, answer, evidences, ids=()):
        return {"_id": rid, "type": qtype, "question": question, "answer": answer, "context": [],
                "supporting_facts": [], "evidences": evidences, "evidences_id": [list(t) for t in ids]}

    records = [
        rec("a1", "compositional", "Who is the mother of the director of film Alpha Film (Film)?", "Carol Mother",
            [["Alpha Film", "director", "Bob Director"], ["Bob Director", "mother", "Carol Mother"]],
            [("Q1", "director", "Q2"), ("Q2", "mother", "Q3")]),
        rec("b2", "compositional", "When did the director of film Beta Film die?", "1 May 1990",
            [["Beta Film", "director", "Bob Director"], ["Bob Director", "date of death", "1 May 1990"]],
            [("Q4", "director", "Q2"), ("Q2", "date of death", "date_information")]),
        rec("c3", "compositional", "Who is the father of the director of film Beta Film?", "Somebody Else",
            [["Beta Film", "director", "Bob Director"], ["Bob Director", "father", "Earl Grand"]]),
        rec("d4", "inference", "Who is Dora Child'S paternal grandfather?", "Earl Grand",
            [["Dora Child", "father", "Bob Director"], ["Bob Director", "father", "Earl Grand"]],
            [("Q5", "father", "Q2"), ("Q2", "father", "Q6")]),
        rec("e5", "comparison", "Which film came out first, Alpha Film or Beta Film?", "Beta Film",
            [["Alpha Film", "publication date", "1961"], ["Beta Film", "publication date", "1946"]]),
        rec("f6", "bridge_comparison", "Which film has the director born first, Gamma or Delta?", "Gamma",
            [["Gamma", "director", "John Smith"], ["Delta", "director", "John Smith"],
             ["John Smith", "date of birth", "1900"], ["John Smith", "date of birth", "1910"]],
            [("Q7", "director", "Q8"), ("Q9", "director", "Q10"), ("Q8", "date of birth", "date_information"),
             ("Q10", "date of birth", "date_information")]),
        rec("g7", "compositional", "Who is the mother of the director of Alpha Film?", "Gina Mother",
            [["Alpha Film", "director", "Frank Co"], ["Frank Co", "mother", "Gina Mother"]]),  # same chain: dropped
        rec("h8", "inference", "Who is the paternal grandfather of him?", "J",
            [["Hank", "father", "I"], ["I", "father", "J"]]),  # does not spell its topic entity
        {"_id": "t9", "type": "compositional", "question": "Who is the mother of Nobody?"},  # test split: no evidences
    ]
    (raw / "dev.json").write_text(json.dumps(records), encoding="utf-8")
    return raw


def test_twowiki_builder_keeps_chain_questions_over_the_union_of_all_evidences(tmp_path, capsys):
    raw = _twowiki_raw(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert datasets_main(["twowiki", "--raw", str(raw), "--out", str(a)]) == 0
    out = capsys.readouterr().out
    assert "kept 2 2hop compositional, 1 2hop inference" in out
    for reason in ("no evidence triplets", "a comparison question", "a bridge_comparison question",
                   "not the evidence chain's last object", "same topic entity and relation chain",
                   "does not spell its topic entity"):
        assert reason in out, reason
    assert datasets_main(["twowiki", "--raw", str(raw), "--out", str(b)]) == 0
    for name in ("twowiki_dev.jsonl", "twowiki_kb.tsv.gz"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name

    ds = load_dataset(a / "twowiki_dev.jsonl")
    by_id = {q.id: q for q in ds}
    q = by_id["2wiki-dev-a1"]
    assert q.question == "Who is the mother of the director of film Alpha Film (Film)?"
    assert q.topic_entities == ["Alpha Film"] and q.type == "2hop"
    # the dropped paraphrase's facts stay in the graph and give a second answer along the same chain
    assert q.answers == ["Carol Mother", "Gina Mother"]
    assert q.extra["relation_chain"] == ["director", "mother"]
    assert ("Alpha Film", "director", "Frank Co") in q.gold_chain
    assert by_id["2wiki-dev-d4"].answers == ["Earl Grand"]
    graph = q.graph()
    assert ("Alpha Film", "publication date", "1961") in graph  # a comparison question's facts are distractors
    assert {"John Smith (Q8)", "John Smith (Q10)"} <= set(graph.entities)  # one label, two Wikidata items
    assert "Bob Director" in graph.entities and "Nobody" not in graph.entities


def test_twowiki_builder_limits_the_records_it_reads(tmp_path, capsys):
    raw = _twowiki_raw(tmp_path)
    assert datasets_main(["twowiki", "--raw", str(raw), "--out", str(tmp_path / "o"), "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "kept 2 2hop compositional" in out and "first 2 of 9 records" in out
    graph = load_graph(tmp_path / "o" / "twowiki_kb.tsv.gz")
    assert len(graph) == 4 and "Gamma" not in graph.entities


def test_missing_raw_files_are_a_clear_error(tmp_path, capsys):
    for cmd in ("mlpq", "geoquery", "mquake", "twowiki"):
        assert datasets_main([cmd, "--raw", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
        assert "not found" in capsys.readouterr().err
