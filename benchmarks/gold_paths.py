"""Do MetaQA's gold answers come back through the question's entity?  (`answers.completion.reach` says no.)

For three 3-hop dev templates whose relation path is known, the answers are
computed twice from the KB, once letting a path pass through the question's
entity again and once not, and compared with the gold sets:

    python benchmarks/gold_paths.py [--data ../shared/data/metaqa]

Prints, per template, how many questions each reading matches exactly.
"""

from __future__ import annotations

import argparse
import gzip
import re
from collections import Counter, defaultdict
from pathlib import Path

TEMPLATES = [  # question pattern -> (relation, read forwards) from the topic entity
    (r"who directed movies that share actors with the movie \[(.+)\]",
     [("starred_actors", True), ("starred_actors", False), ("directed_by", True)]),
    (r"what are the primary languages in the films directed by the director of \[(.+)\]",
     [("directed_by", True), ("directed_by", False), ("in_language", True)]),
    (r"who acted in the movies directed by the director of \[(.+)\]",
     [("directed_by", True), ("directed_by", False), ("starred_actors", True)]),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "metaqa")
    args = ap.parse_args(argv)
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    back: dict[tuple[str, str], list[str]] = defaultdict(list)
    with gzip.open(args.data / "kb.tsv.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                h, r, t = parts
                out[(h, r)].append(t)
                back[(t, r)].append(h)
    counts: Counter = Counter()
    with gzip.open(args.data / "qa_dev_3hop.txt.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            question, answers = line.rstrip("\n").split("\t")
            gold = set(answers.split("|"))
            for pattern, path in TEMPLATES:
                m = re.fullmatch(pattern, question)
                if not m:
                    continue
                topic = m.group(1)
                for through in (True, False):
                    level = {topic}
                    for relation, forwards in path:
                        level = {e for x in level for e in (out if forwards else back)[(x, relation)]}
                        if not through:
                            level.discard(topic)
                    counts[(pattern, through, level - {topic} == gold)] += 1
    print("| template | n | gold matched, back through the topic allowed | gold matched, never back through it |")
    print("|---|---|---|---|")
    for pattern, _ in TEMPLATES:
        n = counts[(pattern, True, True)] + counts[(pattern, True, False)]
        print(f"| {pattern.replace(chr(92), '').replace('[(.+)]', 'X')} | {n} | {counts[(pattern, True, True)]} "
              f"| {counts[(pattern, False, True)]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
