"""Rebuild the MetaQA movie neighbourhood sample from the shared MetaQA data.

Usage: python sample_graphs/metaqa_movies/build.py [METAQA_DIR]
(default METAQA_DIR: ../shared/data/metaqa beside the repository).

The cut keeps, for a handful of topic entities used by development-split
questions, every triplet touching the topic (1 hop) and every triplet of
its neighbours (2 hops), except that hub neighbours (a language, a genre, a
year: more than HUB_DEGREE triplets) are not expanded and `has_tags` is left
out.  Questions are kept only if all their gold answers are in the cut within
two hops of the topic, so every sample question is answerable from the file.
"""

from __future__ import annotations

import collections
import gzip
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOPICS = ["Otto Preminger", "Peter Sellers", "Klaus Kinski", "Gentlemen Prefer Blondes", "Eli Roth", "Victor Sjöström"]
HUB_DEGREE = 60
PER_TOPIC = {1: 1, 2: 2}  # questions per topic and hop count


def main(metaqa_dir: Path) -> None:
    kb = []
    with gzip.open(metaqa_dir / "kb.tsv.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            h, r, t = line.rstrip("\n").split("\t")
            if r != "has_tags":
                kb.append((h, r, t))
    adj: dict[str, list[int]] = collections.defaultdict(list)
    for i, (h, _, t) in enumerate(kb):
        adj[h].append(i)
        adj[t].append(i)

    keep: set[int] = set()
    for topic in TOPICS:
        for i in adj[topic]:
            keep.add(i)
            h, _, t = kb[i]
            other = t if h == topic else h
            if len(adj[other]) <= HUB_DEGREE:
                keep.update(adj[other])
    cut = sorted(kb[i] for i in keep)
    cut_adj: dict[str, set[str]] = collections.defaultdict(set)
    for h, _, t in cut:
        cut_adj[h].add(t)
        cut_adj[t].add(h)

    def within(topic: str, hops: int) -> set[str]:
        frontier, seen = {topic}, {topic}
        for _ in range(hops):
            frontier = {n for e in frontier for n in cut_adj[e]} - seen
            seen |= frontier
        return seen

    questions = []
    for hop in (1, 2):
        taken: collections.Counter[str] = collections.Counter()
        with gzip.open(metaqa_dir / f"qa_dev_{hop}hop.txt.gz", "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                question, answers = line.rstrip("\n").split("\t")
                topic = re.search(r"\[([^\]]+)\]", question).group(1)
                if topic not in TOPICS or taken[topic] >= PER_TOPIC[hop]:
                    continue
                gold = answers.split("|")
                if not set(gold) <= within(topic, hop):
                    continue
                taken[topic] += 1
                questions.append(
                    {
                        "id": f"metaqa-dev-{hop}hop-{n}",
                        "question": question,
                        "topic_entities": [topic],
                        "answers": gold,
                        "graph_file": "movies.tsv",
                        "hops": hop,
                    }
                )

    with open(HERE / "movies.tsv", "w", encoding="utf-8") as fh:
        fh.write("head\trelation\ttail\n")
        for h, r, t in cut:
            fh.write(f"{h}\t{r}\t{t}\n")
    with open(HERE / "questions.jsonl", "w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(f"{len(cut)} triplets, {len(questions)} questions")


if __name__ == "__main__":
    default = HERE.parents[2] / "shared" / "data" / "metaqa"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
