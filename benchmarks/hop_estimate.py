"""How often the hop estimate (kgqa_core.reading.wording) names the hops a MetaQA dev question needs.

Run from the repository root (no model; seconds):

    .venv/bin/python benchmarks/hop_estimate.py [--per-hop N] [--data ../shared/data/metaqa]

The vocabulary is the KB's relation names (what `relations_near` reads on the
whole KB around a topic, up to three hops out); the question's bracketed topic
entity is removed so that its name does not count as a relation word.  Prints,
per hop, the share of questions estimated exactly, under and over, and the
share a count of exact relation words alone would get.

With ``--relations N`` it also checks, on the first N questions per hop,
the relations the estimate says the question names (`HopEstimate.uses`,
what DoG's `question_relations` and READS' relation budget offer): whether
some path from the topic entity that walks exactly those relations (each
as many times as named, in any order and either direction) reaches every
gold answer on the KB; and, where the estimate reads the order of the hops
(`HopEstimate.order`, what DoG's and READS' `hop_order` offer), whether a
path in that order reaches them (``--show-misses`` prints the questions where
it does not).
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter, defaultdict
from itertools import permutations, product
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.graph.hub_caps import relation_words  # noqa: E402
from kgqa_core.reading.wording import MAX_HOPS, _GENERIC, _WORD, estimate_hops  # noqa: E402

_TOPIC = re.compile(r"\[[^\]]*\]")


def kb_relations(kb: Path) -> list[str]:
    rels: dict[str, None] = {}
    with gzip.open(kb, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                rels.setdefault(parts[1], None)
    return list(rels)


def exact_word_hops(question: str, relations: list[str]) -> int:
    """The old rule: question words equal to a relation-name word, adjacent repeats once."""
    words = {w for r in relations for w in relation_words(r).casefold().split() if w not in _GENERIC and len(w) > 2}
    hits, last = 0, -2
    for pos, w in enumerate(_WORD.findall(question.casefold())):
        if w in words:
            if pos != last + 1:
                hits += 1
            last = pos
    return max(1, min(MAX_HOPS, hits))


def kb_index(kb: Path) -> dict[tuple[str, str, bool], set[str]]:
    """(entity, relation, forward) -> the entities one hop away."""
    index: dict[tuple[str, str, bool], set[str]] = defaultdict(set)
    with gzip.open(kb, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                h, r, t = parts
                index[(h, r, True)].add(t)
                index[(t, r, False)].add(h)
    return index


def reaches_gold(index, topic: str, uses: dict[str, int], gold: set[str], cap: int = 3000) -> bool:
    """Whether a path walking exactly `uses` (in any order) from `topic` reaches every gold answer."""
    walk = [r for r, n in uses.items() for _ in range(n)]
    return any(reaches_gold_in_order(index, topic, list(order), gold, cap) for order in set(permutations(walk)))


def reaches_gold_in_order(index, topic: str, order: list[str], gold: set[str], cap: int = 3000) -> bool:
    """Whether a path walking `order` (in that order, either direction each hop) reaches every gold answer."""
    for dirs in product((True, False), repeat=len(order)):
        level = {topic}
        for r, fwd in zip(order, dirs):
            nxt: set[str] = set()
            for e in list(level)[:cap]:
                nxt |= index.get((e, r, fwd), set())
            level = nxt
            if not level:
                break
        if gold and gold <= level | {topic}:
            return True
    return False


def relation_check(args, relations: list[str]) -> None:
    index = kb_index(args.data / "kb.tsv.gz")
    print(f"\nrelations named (`uses`), first {args.relations} dev questions per hop:")
    print("| hop | n | named for every hop | of those, a path of exactly them reaches every gold answer "
          "| hop order read | of those, a path in that order reaches every gold answer |")
    print("|---|---|---|---|---|---|")
    for hop in (1, 2, 3):
        c = Counter()
        with gzip.open(args.data / f"qa_dev_{hop}hop.txt.gz", "rt", encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if i >= args.relations:
                    break
                raw, answers = line.rstrip("\n").split("\t")[:2]
                topic = m.group(0)[1:-1] if (m := _TOPIC.search(raw)) else ""
                question = _TOPIC.sub(lambda m: m.group(0)[1:-1], raw)
                est = estimate_hops(question, relations, [topic])
                gold = set(answers.split("|"))
                c["n"] += 1
                if est.uses:
                    c["named"] += 1
                    c["reached"] += reaches_gold(index, topic, est.uses, gold)
                if est.order:
                    c["ordered"] += 1
                    ok = reaches_gold_in_order(index, topic, est.order, gold)
                    c["in_order"] += ok
                    if not ok and args.show_misses:
                        print(f"  order miss ({hop}-hop): {raw} -> {est.order}")
        n, named, ordered = c["n"], max(c["named"], 1), max(c["ordered"], 1)
        print(f"| {hop} | {n} | {c['named'] / n:.1%} | {c['reached'] / named:.1%} | {c['ordered'] / n:.1%} "
              f"| {c['in_order'] / ordered:.1%} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "metaqa")
    ap.add_argument("--per-hop", type=int, default=0, help="questions per hop (0: all)")
    ap.add_argument("--relations", type=int, default=0,
                    help="check the named relations against the KB on the first N questions per hop (0: skip)")
    ap.add_argument("--show-misses", action="store_true", help="print the questions whose read hop order misses")
    args = ap.parse_args(argv)
    relations = kb_relations(args.data / "kb.tsv.gz")
    print(f"vocabulary: {len(relations)} KB relations; "
          f"{f'first {args.per_hop}' if args.per_hop else 'all'} dev questions per hop")
    print("| hop | n | exact | under | over | exact (exact words only) |")
    print("|---|---|---|---|---|---|")
    total = Counter()
    for hop in (1, 2, 3):
        c = Counter()
        with gzip.open(args.data / f"qa_dev_{hop}hop.txt.gz", "rt", encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if args.per_hop and i >= args.per_hop:
                    break
                raw = line.split("\t")[0]
                topic = m.group(0)[1:-1] if (m := _TOPIC.search(raw)) else ""
                question = _TOPIC.sub(lambda m: m.group(0)[1:-1], raw)
                est = estimate_hops(question, relations, [topic]).hops
                c["n"] += 1
                c["exact" if est == hop else "under" if est < hop else "over"] += 1
                c["old"] += exact_word_hops(_TOPIC.sub(" X ", raw), relations) == hop
        total.update(c)
        n = c["n"]
        print(f"| {hop} | {n} | {c['exact'] / n:.1%} | {c['under'] / n:.1%} | {c['over'] / n:.1%} | {c['old'] / n:.1%} |")
    n = total["n"]
    print(f"| all | {n} | {total['exact'] / n:.1%} | {total['under'] / n:.1%} | {total['over'] / n:.1%} | "
          f"{total['old'] / n:.1%} |")
    if args.relations:
        relation_check(args, relations)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
