"""Shared pieces of the multi-domain dev benchmark builders (``datasets/multidomain/``).

Why a multi-domain benchmark: our methods were tuned on MetaQA's movie KB and
its wordings.  Each source module (`mlpq`, `geoquery`) turns a public KGQA
dataset of another domain into the evaluation JSONL format with one graph per
domain that every question of that domain is asked over (so the graph holds
distractors, not a per-question cut that already contains the answer).

This module holds what the builders share, so that every domain is written
the same way:

* `Chain` / `follow_chain`: a question's relation chain and the entities it
  reaches from the topic entity (the answer set is what the chain reaches in
  the graph we ship, so a method that finds another valid answer in the graph
  is not marked wrong);
* `unreachable_answers`: the check every shipped question passes, a walk over
  the graph in either direction along at most the question's hop count;
* `spread_sample`: a deterministic sample that takes questions round-robin
  from the source's templates (relation chains), so one frequent template
  does not fill the quota;
* `write_graph` / `write_domain`: a byte-reproducible gzipped TSV graph and
  JSONL file, validated by the project's own loaders before the builder
  reports success.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Hashable, Iterable, Sequence

Triple = tuple[str, str, str]
Step = tuple[str, bool]  # (relation, forward): forward follows head -> tail, backward tail -> head


class MultiDomainError(ValueError):
    """The raw files of a source are missing or malformed."""


# ------------------------------------------------------------------ names
# the multi-domain dev benchmark's question files, relative to the repository (benchmarks/multidomain.py,
# tokens.py, context_pool.py): each domain's questions with its whole graph; MetaQA's whole KB is one of them
DEV_DOMAINS = {
    "dbpedia": Path("datasets") / "multidomain" / "dbpedia_dev.jsonl",
    "geography": Path("datasets") / "multidomain" / "geography_dev.jsonl",
    "wikidata": Path("datasets") / "multidomain" / "wikidata_dev.jsonl",
    "metaqa": Path("datasets") / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl",
}
# questions that name two entities and ask what they share (LPKG's 2i pattern), which none of the sources above
# asks: generated on two of those graphs by `python -m kgqa_core generate --patterns 2i` (template wording; the
# rebuild commands are in each folder's README); type "2i"
TWO_ENTITY_SETS = {
    "geography-2i": Path("datasets") / "multidomain" / "geography_two_entities.jsonl",
    "metaqa-2i": Path("datasets") / "metaqa_full_kb" / "metaqa_two_entities.jsonl",
}


def clean_name(text: str) -> str:
    """One line of text with single spaces: a safe TSV field (no tabs or newlines) and a readable name."""
    return " ".join(text.replace("\t", " ").split())


def tsv_field(name: str) -> str:
    """``name`` as a field of our TSV graph files.

    The project's TSV loader unquotes a field that starts *and* ends with a
    double quote (spreadsheet exports), so such a name is written quoted with
    its inner quotes doubled, which the loader reads back unchanged.
    """
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return '"' + name.replace('"', '""') + '"'
    return name


# ------------------------------------------------------------------ graph
@dataclass
class Graph:
    """A de-duplicated triplet set with adjacency both ways, built once per domain."""

    triplets: set[Triple] = field(default_factory=set)
    out: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    inc: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))

    def add(self, h: str, r: str, t: str) -> None:
        if not (h and r and t):
            raise MultiDomainError(f"empty name in triplet {(h, r, t)!r}")
        if (h, r, t) in self.triplets:
            return
        self.triplets.add((h, r, t))
        self.out[h][r].add(t)
        self.inc[t][r].add(h)

    def __len__(self) -> int:
        return len(self.triplets)

    def has_entity(self, name: str) -> bool:
        return name in self.out or name in self.inc

    @property
    def entities(self) -> set[str]:
        return set(self.out) | set(self.inc)

    @property
    def relations(self) -> set[str]:
        return {r for _, r, _ in self.triplets}

    def step(self, nodes: Iterable[str], step: Step) -> set[str]:
        rel, forward = step
        side = self.out if forward else self.inc
        found: set[str] = set()
        for n in nodes:
            found |= side.get(n, {}).get(rel, set())
        return found

    def neighbours(self, node: str) -> set[str]:
        found: set[str] = set()
        for side in (self.out, self.inc):
            for targets in side.get(node, {}).values():
                found |= targets
        return found


Chain = tuple[Step, ...]


def follow_chain(graph: Graph, topic: str, chain: Chain) -> set[str]:
    """The entities reached from ``topic`` by following ``chain`` step by step (set semantics)."""
    nodes = {topic}
    for step in chain:
        nodes = graph.step(nodes, step)
    return nodes


def chain_triplets(graph: Graph, topic: str, chain: Chain, answers: Iterable[str]) -> list[Triple]:
    """The triplets of every path along ``chain`` from ``topic`` to one of ``answers``, hop by hop."""
    wanted = set(answers)
    layers = [{topic}]
    for step in chain:
        layers.append(graph.step(layers[-1], step))
    alive = layers[-1] & wanted  # walk back keeping only the nodes on a path to a wanted answer
    by_hop: list[list[Triple]] = []
    for depth in range(len(chain), 0, -1):
        rel, forward = chain[depth - 1]
        prev_alive, used = set(), set()
        for node in layers[depth - 1]:
            for other in graph.step([node], (rel, forward)) & alive:
                used.add((node, rel, other) if forward else (other, rel, node))
                prev_alive.add(node)
        alive = prev_alive
        by_hop.append(sorted(used))
    seen: set[Triple] = set()
    out = []
    for t in (t for hop in reversed(by_hop) for t in hop):
        if t not in seen:  # a triplet can serve two hops (a state bordering a state bordering ...)
            seen.add(t)
            out.append(t)
    return out


def chain_question(qid: str, question: str, graph: Graph, topic: str, chain: Chain, source_answer: str,
                   graph_file: str, source: str) -> tuple[dict, bool]:
    """One evaluation line for a question along ``chain`` from ``topic``, and whether the graph added answers.

    Why one function: every path-question builder (MLPQ, MQuAKE, 2WikiMultihopQA) owes the same promise, that
    the answers are all the chain reaches in the shipped graph with the source's own first, and its gold chain
    the triplets of every path to them; the source's answer must be among them (its chain is in the graph).
    """
    reached = follow_chain(graph, topic, chain)
    assert source_answer in reached, (qid, source_answer)
    ordered = [source_answer] + sorted(reached - {source_answer})
    item = {
        "id": qid,
        "question": question,
        "topic_entities": [topic],
        "answers": ordered,
        "type": f"{len(chain)}hop",
        "graph_file": graph_file,
        "gold_chain": [list(t) for t in chain_triplets(graph, topic, chain, ordered)],
        "relation_chain": [r for r, _ in chain],
        "source": source,
    }
    return item, len(ordered) > 1


def read_json_list(path: Path, source: str, what: str) -> list:
    """The list a source's JSON file holds, or a clear error naming the file (missing, not JSON, not a list)."""
    if not path.is_file():
        raise MultiDomainError(f"{source} file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MultiDomainError(f"{path.name}: not JSON ({exc})") from None
    if not isinstance(data, list):
        raise MultiDomainError(f"{path.name}: expected a list of {what}")
    return data


def unreachable_answers(graph: Graph, topics: Sequence[str], answers: Sequence[str], hops: int) -> list[str]:
    """Answers not within ``hops`` steps of a topic entity, walking triplets in either direction."""
    seen = set(t for t in topics if graph.has_entity(t))
    frontier = set(seen)
    for _ in range(hops):
        nxt = set()
        for node in frontier:
            nxt |= graph.neighbours(node)
        frontier = nxt - seen
        seen |= frontier
    return [a for a in answers if a not in seen]


# ------------------------------------------------------------------ sampling
def spread_sample(candidates: Sequence[object], template: Callable[[object], Hashable], n: int, seed: int,
                  salt: str = "") -> list[object]:
    """``n`` candidates taken round-robin over their templates, in a seeded order.

    Templates are visited in a shuffled order and each template's candidates
    in a shuffled order (both seeded with ``seed`` and ``salt``), so the
    sample covers as many templates as ``n`` allows and is the same on every
    run.  ``candidates`` must come in a deterministic order.
    """
    rng = random.Random(f"{seed}:{salt}")
    groups: dict[Hashable, list[object]] = {}
    for c in candidates:
        groups.setdefault(template(c), []).append(c)
    keys = sorted(groups, key=repr)
    rng.shuffle(keys)
    for k in keys:
        rng.shuffle(groups[k])
    picked: list[object] = []
    depth = 0
    while len(picked) < n and any(depth < len(groups[k]) for k in keys):
        for k in keys:
            if depth < len(groups[k]) and len(picked) < n:
                picked.append(groups[k][depth])
        depth += 1
    return picked


# ------------------------------------------------------------------ output
def write_graph(triplets: Iterable[Triple], path: Path) -> Path:
    """Sorted, tab-separated, gzip with a zero timestamp and no file name: same triplets -> same bytes."""
    lines = "".join("\t".join(tsv_field(x) for x in t) + "\n" for t in sorted(set(triplets)))
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(lines.encode("utf-8"))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, path)  # atomic: a concurrent reader never sees half a file
    return path


@dataclass
class DomainStats:
    """What a builder kept and dropped, printed by the command."""

    domain: str
    kept: dict[str, int] = field(default_factory=dict)
    candidates: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    triplets: int = 0
    entities: int = 0
    relations: int = 0
    answers_added: int = 0
    notes: list[str] = field(default_factory=list)

    def drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + n

    def describe(self) -> str:
        kept = ", ".join(f"{n} {t}" for t, n in sorted(self.kept.items()))
        cands = ", ".join(f"{n} {t}" for t, n in sorted(self.candidates.items()))
        lines = [f"{self.domain}: kept {kept} (from {cands} usable candidates)",
                 f"  graph: {self.triplets} triplets, {self.entities} entities, {self.relations} relations"]
        if self.answers_added:
            lines.append(f"  {self.answers_added} kept questions have more answers in the graph than the source's one")
        for reason, n in sorted(self.dropped.items(), key=lambda x: (-x[1], x[0])):
            lines.append(f"  dropped {n}: {reason}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


def check_items(items: Sequence[dict], graph: Graph) -> list[str]:
    """Every problem that would make a shipped question unfair; empty when all hold.

    Topic entities and answers are graph nodes, gold chains are graph
    triplets, ids are unique, and every answer is within the question's hop
    count of a topic entity.
    """
    problems = []
    seen: set[str] = set()
    for it in items:
        qid = it["id"]
        if qid in seen:
            problems.append(f"{qid}: duplicate id")
        seen.add(qid)
        for name in [*it["topic_entities"], *it["answers"]]:
            if not graph.has_entity(name):
                problems.append(f"{qid}: {name!r} is not a graph node")
        for t in it.get("gold_chain") or []:
            if tuple(t) not in graph.triplets:
                problems.append(f"{qid}: gold triplet {t!r} is not in the graph")
        hops = int(it["type"].rstrip("hop"))
        far = unreachable_answers(graph, it["topic_entities"], it["answers"], hops)
        if far:
            problems.append(f"{qid}: answers {far[:3]!r} are not within {hops} hops")
    return problems


def write_domain(items: list[dict], graph: Graph, out_dir: Path, domain: str) -> tuple[Path, Path]:
    """Write ``<domain>_dev.jsonl`` and ``<domain>_kb.tsv.gz`` into ``out_dir`` and load both back.

    Raises `MultiDomainError` when a question fails `check_items`, or when the
    written graph does not load back as exactly the triplets we meant.
    """
    from ..eval.dataset import load_dataset, write_dataset
    from ..graph.loaders import load_graph

    problems = check_items(items, graph)
    if problems:
        raise MultiDomainError(f"{domain}: {len(problems)} problems, e.g. " + "; ".join(problems[:5]))
    out_dir = Path(out_dir)
    graph_path = write_graph(graph.triplets, out_dir / f"{domain}_kb.tsv.gz")
    loaded = load_graph(graph_path)
    if {t.as_tuple for t in loaded} != graph.triplets:
        raise MultiDomainError(f"{graph_path}: the written graph does not load back as the same triplets")
    jsonl = write_dataset(items, out_dir / f"{domain}_dev.jsonl")
    load_dataset(jsonl)  # the file we ship must pass our own validation
    return jsonl, graph_path
