"""Cut per-question subgraphs from MetaQA (development split) into the evaluation JSONL format.

MetaQA (Zhang, Dai, Kozareva, Smola, Song, AAAI 2018; CC BY 3.0) asks 1-3 hop
questions over one movie KB.  Our methods read a graph small enough for a
prompt, so each question gets its own subgraph:

* the 2-hop neighbourhood of the bracketed topic entity, without ``has_tags``
  (the tags relation multiplies the size and no question asks about it);
* capped at ``max_triplets``, filled in priority order so that the answer
  stays reachable: (0) one path per gold answer along the question's inferred
  relation chain, (1) the rest of that chain's paths to gold answers,
  (2) other paths to gold answers, (3) the topic's own triplets, (4) second-hop
  triplets, those through low-degree entities first (a director's other films
  before ten thousand English-language films).  Ties are broken by a shuffle
  seeded with ``seed`` and the question id, so the cut is deterministic;
* a question whose gold answers cannot all be kept within the cap, or are not
  in its neighbourhood at all, is skipped and counted (this favours questions
  with fewer answers: see the counts the builder prints).

The relation chain is inferred as the (relation, direction) pattern of the
question's hop count that reaches the most gold answers (ties: the pattern
whose relations the question's words name, e.g. "written" for ``written_by``,
then the fewest non-gold entities reached); when it reaches all of them its paths become the
question's ``gold_chain``.
"""

from __future__ import annotations

import gzip
import os
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

Triple = tuple[str, str, str]

EXCLUDED_RELATIONS = ("has_tags",)
# Words of the MetaQA question templates that name a relation; they break ties
# between chains reaching the same answers (a film's writer who also directed it).
_CUES = {
    "directed_by": ("direct",),
    "written_by": ("writ", "author", "screenwriter", "screenplay"),
    "starred_actors": ("act", "star", "appear", "cast"),
    "release_year": ("release", "year", "when", "date"),
    "in_language": ("language",),
    "has_genre": ("genre", "type", "kind"),
    "has_imdb_rating": ("rating", "rated", "rate"),
    "has_imdb_votes": ("votes", "popular", "famous"),
}
_TOPIC = re.compile(r"\[([^\]]+)\]")


def default_data_dir() -> Path:
    """$KGQA_METAQA_DIR, else ../shared/data/metaqa next to the repository."""
    env = os.environ.get("KGQA_METAQA_DIR")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    return (repo / ".." / "shared" / "data" / "metaqa").resolve()


class MetaQAError(ValueError):
    """The MetaQA files are missing or malformed."""


@dataclass
class MetaQAKB:
    """The KB with an entity -> triplet-index adjacency built once."""

    triplets: list[Triple]
    by_entity: dict[str, list[int]]
    by_casefold: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, exclude_relations: Iterable[str] = EXCLUDED_RELATIONS) -> "MetaQAKB":
        excluded = set(exclude_relations)
        if not path.is_file():
            raise MetaQAError(f"MetaQA KB not found: {path} (set --data-dir or KGQA_METAQA_DIR)")
        triplets: list[Triple] = []
        seen: set[Triple] = set()
        by_entity: dict[str, list[int]] = defaultdict(list)
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 3:
                    if line.strip():
                        raise MetaQAError(f"{path}: line {lineno}: expected head<TAB>relation<TAB>tail")
                    continue
                h, r, t = (p.strip() for p in parts)
                if r in excluded or (h, r, t) in seen:
                    continue
                seen.add((h, r, t))
                idx = len(triplets)
                triplets.append((h, r, t))
                by_entity[h].append(idx)
                if t != h:
                    by_entity[t].append(idx)
        kb = cls(triplets=triplets, by_entity=dict(by_entity))
        kb.by_casefold = {e.casefold(): e for e in sorted(kb.by_entity, reverse=True)}
        return kb

    def resolve(self, name: str) -> str | None:
        if name in self.by_entity:
            return name
        return self.by_casefold.get(name.casefold())

    def degree(self, entity: str) -> int:
        return len(self.by_entity.get(entity, ()))

    def other(self, idx: int, entity: str) -> str:
        h, _, t = self.triplets[idx]
        return t if h == entity else h


@dataclass
class MetaQAQuestion:
    hop: int
    line: int
    text: str
    answers: list[str]

    @property
    def topic(self) -> str | None:
        m = _TOPIC.search(self.text)
        return m.group(1).strip() if m else None

    @property
    def plain_text(self) -> str:
        return _TOPIC.sub(lambda m: m.group(1), self.text).strip()

    @property
    def id(self) -> str:
        return f"metaqa-dev-{self.hop}hop-{self.line:05d}"


def read_questions(data_dir: Path, hop: int) -> list[MetaQAQuestion]:
    path = data_dir / f"qa_dev_{hop}hop.txt.gz"
    if not path.is_file():
        raise MetaQAError(f"MetaQA questions not found: {path}")
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if "\t" not in line:
                raise MetaQAError(f"{path}: line {lineno}: expected question<TAB>answer1|answer2")
            q, a = line.rstrip("\n").split("\t", 1)
            answers = list(dict.fromkeys(x.strip() for x in a.split("|") if x.strip()))
            out.append(MetaQAQuestion(hop=hop, line=lineno, text=q.strip(), answers=answers))
    return out


# ------------------------------------------------------------------ paths
Path_ = tuple[int, ...]  # triplet indices from the topic to an answer


def _direction(kb: MetaQAKB, idx: int, frm: str) -> str:
    return f"{kb.triplets[idx][1]}" if kb.triplets[idx][0] == frm else f"{kb.triplets[idx][1]}^-1"


def _paths(kb: MetaQAKB, topic: str, hops: int) -> list[tuple[tuple[str, ...], Path_, str]]:
    """Every simple path of exactly `hops` triplets from the topic: (pattern, triplets, end entity)."""
    out = []
    frontier: list[tuple[tuple[str, ...], Path_, str, frozenset[str]]] = [((), (), topic, frozenset([topic]))]
    for _ in range(hops):
        nxt = []
        for pattern, path, ent, visited in frontier:
            for idx in kb.by_entity.get(ent, ()):
                if idx in path:
                    continue
                other = kb.other(idx, ent)
                if other in visited:
                    continue
                nxt.append((pattern + (_direction(kb, idx, ent),), path + (idx,), other, visited | {other}))
        frontier = nxt
    for pattern, path, ent, _ in frontier:
        out.append((pattern, path, ent))
    return out


@dataclass
class CutResult:
    item: dict | None
    reason: str = ""


def cut_question(kb: MetaQAKB, q: MetaQAQuestion, max_triplets: int, seed: int) -> CutResult:
    """The evaluation-format line for one question, or why it was skipped."""
    topic_name = q.topic
    if topic_name is None:
        return CutResult(None, "no bracketed topic entity")
    topic = kb.resolve(topic_name)
    if topic is None:
        return CutResult(None, "topic entity not in the KB")
    gold = [a for a in (kb.resolve(x) for x in q.answers) if a is not None]
    if len(gold) < len(q.answers):
        return CutResult(None, "gold answer not in the KB")
    gold_set = set(gold)

    all_paths = _paths(kb, topic, q.hop)
    paths = [p for p in all_paths if p[2] in gold_set]
    if not paths:
        return CutResult(None, "no path to a gold answer")
    reached: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for pattern, _, end in paths:
        reached[pattern].add(end)
    if len(set().union(*reached.values())) < len(gold_set):
        return CutResult(None, "some gold answers not within the hop count")

    spill: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for pattern, _, end in all_paths:
        if pattern in reached and end not in gold_set:
            spill[pattern].add(end)
    words = q.plain_text.casefold()
    cue = lambda pattern: sum(any(k in words for k in _CUES.get(step.split("^")[0], ())) for step in pattern)  # noqa: E731
    ranked = sorted(reached, key=lambda p: (-len(reached[p]), -cue(p), len(spill[p]), p))
    chain = ranked[0]
    chain_paths = sorted(p for pat, p, _ in paths if pat == chain)
    other_paths = sorted(p for pat, p, _ in paths if pat != chain)
    cover: dict[str, Path_] = {}
    for pat, path, end in sorted(paths, key=lambda x: (x[0] != chain, x[1])):
        cover.setdefault(end, path)

    rng = random.Random(f"{seed}:{q.id}")
    keep: dict[int, None] = {}

    def add_path(path: Path_) -> bool:
        new = [i for i in path if i not in keep]
        if len(keep) + len(new) > max_triplets:
            return False
        for i in new:
            keep[i] = None
        return True

    for end in sorted(cover):
        if not add_path(cover[end]):
            return CutResult(None, "gold answers need more triplets than the cap")
    for path in chain_paths + other_paths:
        add_path(path)

    hop1 = [i for i in kb.by_entity.get(topic, ())]
    rng.shuffle(hop1)
    for i in hop1:
        if len(keep) >= max_triplets:
            break
        keep.setdefault(i, None)
    middles = {kb.other(i, topic) for i in keep if topic in (kb.triplets[i][0], kb.triplets[i][2])}
    hop2 = list({i for m in middles for i in kb.by_entity.get(m, ())} - set(keep))
    hop2.sort()
    rng.shuffle(hop2)
    hop2.sort(key=lambda i: min(kb.degree(e) for e in (kb.triplets[i][0], kb.triplets[i][2]) if e in middles))
    for i in hop2:
        if len(keep) >= max_triplets:
            break
        keep[i] = None

    ids = sorted(keep)
    chain_covers_all = reached[chain] == gold_set
    item = {
        "id": q.id,
        "question": q.plain_text,
        "topic_entities": [topic],
        "answers": gold,
        "type": f"{q.hop}hop",
        "graph": [list(kb.triplets[i]) for i in ids],
    }
    if chain_covers_all:
        gold_ids = sorted({i for p in chain_paths for i in p})
        item["gold_chain"] = [list(kb.triplets[i]) for i in gold_ids]
        item["relation_chain"] = list(chain)
    item["source"] = f"MetaQA dev {q.hop}-hop line {q.line}"
    return CutResult(item)


@dataclass
class BuildStats:
    kept: dict[int, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    examined: int = 0
    triplets_max: int = 0
    triplets_mean: float = 0.0
    with_gold_chain: int = 0

    def describe(self) -> str:
        kept = ", ".join(f"{n} {h}-hop" for h, n in sorted(self.kept.items()))
        lines = [f"kept {kept} of {self.examined} examined questions"]
        for reason, n in sorted(self.skipped.items(), key=lambda x: -x[1]):
            lines.append(f"  skipped {n}: {reason}")
        lines.append(
            f"  triplets per question: mean {self.triplets_mean:.1f}, max {self.triplets_max}; "
            f"gold_chain on {self.with_gold_chain}"
        )
        return "\n".join(lines)


def build_metaqa(
    hops: Iterable[int] = (1, 2),
    n: int = 200,
    max_triplets: int = 200,
    seed: int = 0,
    data_dir: Path | None = None,
    kb: MetaQAKB | None = None,
) -> tuple[list[dict], BuildStats]:
    """A stratified sample: `n` questions split evenly across `hops` (the remainder to the first hops)."""
    hops = list(dict.fromkeys(int(h) for h in hops))
    if not hops or any(h not in (1, 2) for h in hops):
        raise MetaQAError("--hops must be 1 and/or 2 (3-hop questions need neighbourhoods of thousands of triplets)")
    if n < 1:
        raise MetaQAError("--n must be at least 1")
    if max_triplets < 2:
        raise MetaQAError("--max-triplets must be at least 2")
    data_dir = Path(data_dir) if data_dir else default_data_dir()
    if kb is None:
        kb = MetaQAKB.load(data_dir / "kb.tsv.gz")
    stats = BuildStats()
    items: list[dict] = []
    items.extend(_stratified(hops, n, seed, data_dir, stats, lambda q: cut_question(kb, q, max_triplets, seed)))
    if items:
        sizes = [len(it["graph"]) for it in items]
        stats.triplets_max = max(sizes)
        stats.triplets_mean = sum(sizes) / len(sizes)
        stats.with_gold_chain = sum("gold_chain" in it for it in items)
    return items, stats


# ------------------------------------------------------------- whole KB
FULL_KB_FILE = "metaqa_kb.tsv.gz"


def build_metaqa_full_kb(
    hops: Iterable[int] = (1, 2, 3),
    n: int = 60,
    seed: int = 0,
    data_dir: Path | None = None,
    out_dir: Path | None = None,
    kb: MetaQAKB | None = None,
) -> tuple[list[dict], BuildStats]:
    """A stratified sample of dev questions asked over the *whole* KB.

    Every item names the same ``graph_file`` (a copy of the KB beside the
    output, all nine relations including ``has_tags``), so the evaluation
    loads the graph once and no question gets a cut that already contains
    its answer.  A question is kept when its topic entity and every gold
    answer are KB entities; nothing about reachability is assumed, since the
    methods must find the path themselves.
    """
    import shutil

    hops = list(dict.fromkeys(int(h) for h in hops))
    if not hops or any(h not in (1, 2, 3) for h in hops):
        raise MetaQAError("--hops must be among 1, 2, 3")
    if n < 1:
        raise MetaQAError("--n must be at least 1")
    data_dir = Path(data_dir) if data_dir else default_data_dir()
    source = data_dir / "kb.tsv.gz"
    if kb is None:
        kb = MetaQAKB.load(source, exclude_relations=())
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / FULL_KB_FILE
        if not target.is_file() or target.stat().st_size != source.stat().st_size:
            tmp = out_dir / f".{FULL_KB_FILE}.{os.getpid()}.tmp"
            shutil.copyfile(source, tmp)
            os.replace(tmp, target)  # atomic: two builders at once never leave half a file
    stats = BuildStats()
    items: list[dict] = []

    def over_whole_kb(q: MetaQAQuestion) -> CutResult:
        topic = kb.resolve(q.topic) if q.topic else None
        gold = [a for a in (kb.resolve(x) for x in q.answers) if a is not None]
        reason = ("no bracketed topic entity" if q.topic is None else "topic entity not in the KB"
                  if topic is None else "gold answer not in the KB" if len(gold) < len(q.answers) else "")
        if reason:
            return CutResult(None, reason)
        return CutResult({
            "id": q.id,
            "question": q.plain_text,
            "topic_entities": [topic],
            "answers": gold,
            "type": f"{q.hop}hop",
            "graph_file": FULL_KB_FILE,
            "source": f"MetaQA dev {q.hop}-hop line {q.line} (whole KB)",
        })

    items.extend(_stratified(hops, n, seed, data_dir, stats, over_whole_kb))
    stats.triplets_max = len(kb.triplets)
    stats.triplets_mean = float(len(kb.triplets))
    return items, stats


def _stratified(hops: list[int], n: int, seed: int, data_dir: Path, stats: BuildStats,
                keep: "Callable[[MetaQAQuestion], CutResult]") -> list[dict]:
    """`n` questions split evenly across `hops` (the remainder to the first), each hop's file in a seeded
    shuffle, taking the questions `keep` turns into an item and counting why the others were skipped."""
    items: list[dict] = []
    rng = random.Random(seed)
    for k, hop in enumerate(hops):
        quota = n // len(hops) + (1 if k < n % len(hops) else 0)
        questions = read_questions(data_dir, hop)
        order = list(range(len(questions)))
        rng.shuffle(order)
        got = 0
        for i in order:
            if got >= quota:
                break
            stats.examined += 1
            res = keep(questions[i])
            if res.item is None:
                stats.skipped[res.reason] = stats.skipped.get(res.reason, 0) + 1
                continue
            items.append(res.item)
            got += 1
        stats.kept[hop] = got
    return items
