"""2WikiMultihopQA (Wikipedia + Wikidata evidence chains) -> the ``twowiki`` domain of the multi-domain dev benchmark.

2WikiMultihopQA (Ho et al., "Constructing A Multi-hop QA Dataset for
Comprehensive Evaluation of Reasoning Steps", COLING 2020;
https://github.com/Alab-NII/2wikimultihop) asks template questions about
films, songs, people and their families ("Who is the mother of the director
of film Polish-Russian War (Film)?", "Who is Lothair II's paternal
grandfather?").  Its train and dev records give, besides the question and the
answer, the ``evidences``: the ``[subject, relation, object]`` triplets of
Wikidata that answer it (``["Polish-Russian War", "director", "Xawery
Żuławski"]``), and, in the version with ids, ``evidences_id`` (the same
triplets with Wikidata ids where the object is an item).  The test split has
no evidences and is not used.

The domain graph is the **union of the evidences of every record read** (all
four question types, in file order, at most ``limit`` records so the graph
stays within the benchmark's size), so the facts of thousands of other
questions are the distractors.  Node names are the labels the evidences
give; different labels are never merged (``British`` and ``United Kingdom``
stay two nodes, as the source writes them), and a label that names two
Wikidata items gets the item's id (``John Smith (Q123)``).  Relations are the
Wikidata property labels of the evidences (``director``, ``mother``,
``date of death``).

Questions: the ``compositional`` and ``inference`` records whose evidences
form one chain from the first subject (the topic entity, which the question
must spell) to the answer; ``comparison`` and ``bridge_comparison`` records
compare two entities and contribute facts only.  The source's answer must be
the chain's last object.  Questions with the same topic entity and relation
chain count once.  The answer set is every node the relation chain reaches
from the topic entity in the graph (the source's answer first).  ``n``
questions of each source type are sampled with `spread_sample` over relation
chains and a fixed seed; their ``type`` is the hop count (``2hop``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from .multidomain import (
    DomainStats,
    Graph,
    MultiDomainError,
    chain_question,
    clean_name,
    read_json_list,
    spread_sample,
)

DOMAIN = "twowiki"
DEFAULT_FILE = "dev.json"
DEFAULT_LIMIT = 6000
MAX_TRIPLETS = 20_000
QUESTION_TYPES = ("compositional", "inference")  # the types whose evidences are one chain
_QID = re.compile(r"^Q\d+$")


def read_records(path: Path) -> list[dict]:
    """The records of a 2WikiMultihopQA JSON file (a list of objects), checked for the fields we use."""
    records = read_json_list(path, "2WikiMultihopQA", "records")
    for i, rec in enumerate(records):
        ok = isinstance(rec, dict) and isinstance(rec.get("_id"), str) and isinstance(rec.get("question"), str)
        evid = rec.get("evidences") if ok else None
        if ok and evid is not None:
            ok = isinstance(evid, list) and all(
                isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t) for t in evid)
        if not ok:
            raise MultiDomainError(f"{path.name}: record {i} is not a 2WikiMultihopQA record "
                                   "(_id, question and [subject, relation, object] evidences)")
    return records


def _mention_ids(rec: dict) -> list[tuple[str | None, str | None]]:
    """The Wikidata ids of each evidence triplet's subject and object, where the record gives them."""
    evid, ids = rec.get("evidences") or [], rec.get("evidences_id") or []
    if len(ids) != len(evid):
        return [(None, None)] * len(evid)
    out = []
    for t in ids:
        s, o = (t[0], t[2]) if isinstance(t, list) and len(t) == 3 else (None, None)
        out.append((s if isinstance(s, str) and _QID.match(s) else None,
                    o if isinstance(o, str) and _QID.match(o) else None))
    return out


def _namer(records: list[dict]) -> tuple[Callable[[str, str | None], str], list[str]]:
    """A function (label, qid) -> node name, and the labels that name several Wikidata items."""
    qids: dict[str, set[str]] = {}
    for rec in records:
        for (s, _, o), (sid, oid) in zip(rec.get("evidences") or [], _mention_ids(rec)):
            for label, qid in ((s, sid), (o, oid)):
                qids.setdefault(clean_name(label), set())
                if qid:
                    qids[clean_name(label)].add(qid)
    shared = sorted(label for label, ids in qids.items() if len(ids) > 1)
    shared_set = set(shared)

    def name(label: str, qid: str | None) -> str:
        label = clean_name(label)
        return f"{label} ({qid})" if label in shared_set and qid else label

    return name, shared


def _spells(question: str, label: str) -> bool:
    # 2WikiMultihopQA title-cases its questions ("Lothair Ii's mother"), so compare case-insensitively
    return clean_name(label).casefold() in clean_name(question).casefold()


def build_twowiki(raw_dir: Path, file: str = DEFAULT_FILE, n: int = 40, seed: int = 0, limit: int = DEFAULT_LIMIT
                  ) -> tuple[list[dict], Graph, DomainStats]:
    """The sampled questions (``n`` per source question type), the domain graph and the build statistics."""
    if n < 1:
        raise MultiDomainError("--n must be at least 1")
    if limit < 1:
        raise MultiDomainError("--limit must be at least 1")
    path = Path(raw_dir) / file
    records = read_records(path)
    stats = DomainStats(domain=DOMAIN)
    if len(records) > limit:
        stats.notes.append(f"the graph and the questions use the first {limit} of {len(records)} records (--limit)")
        records = records[:limit]
    with_evidence = [(i, rec) for i, rec in enumerate(records) if rec.get("evidences")]
    if len(with_evidence) < len(records):
        stats.drop("no evidence triplets (the test split has none)", len(records) - len(with_evidence))
    name, shared = _namer([rec for _, rec in with_evidence])
    if shared:
        stats.notes.append(f"{len(shared)} labels name several Wikidata items and carry the item id, e.g. {shared[:3]}")

    graph = Graph()
    chains: dict[int, list[tuple[str, str, str]]] = {}
    for i, rec in with_evidence:
        triples = [(name(s, sid), clean_name(r), name(o, oid))
                   for (s, r, o), (sid, oid) in zip(rec["evidences"], _mention_ids(rec))]
        for t in triples:
            graph.add(*t)
        chains[i] = triples
    stats.triplets, stats.entities, stats.relations = len(graph), len(graph.entities), len(graph.relations)
    if len(graph) > MAX_TRIPLETS:
        raise MultiDomainError(f"the graph has {len(graph)} triplets, more than {MAX_TRIPLETS}: give a smaller --limit")

    candidates: dict[tuple[str, int], list[tuple]] = {}
    seen: set[tuple] = set()
    for i, rec in with_evidence:
        qtype = rec.get("type")
        if qtype not in QUESTION_TYPES:
            stats.drop(f"a {qtype} question (compares two entities; its facts are in the graph)")
            continue
        triples, evid = chains[i], rec["evidences"]
        if not all(triples[k][2] == triples[k + 1][0] for k in range(len(triples) - 1)):
            stats.drop("evidences that are not one chain from the topic entity to the answer")
            continue
        if not _spells(rec["question"], evid[0][0]):
            stats.drop("the question does not spell its topic entity's label")
            continue
        answer = rec.get("answer")
        if not isinstance(answer, str) or clean_name(answer).casefold() != clean_name(evid[-1][2]).casefold():
            stats.drop("the source's answer is not the evidence chain's last object")
            continue
        topic, source_answer = triples[0][0], triples[-1][2]
        chain = tuple((r, True) for _, r, _ in triples)
        if (topic, chain) in seen:
            stats.drop("same topic entity and relation chain as an earlier question")
            continue
        seen.add((topic, chain))
        candidates.setdefault((qtype, len(chain)), []).append(
            (i, rec["_id"], clean_name(rec["question"]), topic, chain, source_answer, qtype))
    groups = sorted(candidates.items(), key=lambda x: (x[0][1], x[0][0]))  # by hop count, then source type
    stats.candidates = {f"{h}hop {t}": len(c) for (t, h), c in groups}

    items = []
    for (qtype, hops), cands in groups:
        picked = spread_sample(cands, lambda c: tuple(r for r, _ in c[4]), n, seed, salt=f"twowiki-{qtype}-{hops}")
        picked.sort(key=lambda c: c[0])
        for index, rid, question, topic, chain, source_answer, _ in picked:
            item, added = chain_question(f"2wiki-{Path(file).stem}-{rid}", question, graph, topic, chain,
                                         source_answer, f"{DOMAIN}_kb.tsv.gz",
                                         f"2WikiMultihopQA {file} record {index} (_id {rid}, type {qtype})")
            stats.answers_added += added
            items.append(item)
        stats.kept[f"{hops}hop {qtype}"] = len(picked)
    return items, graph, stats
