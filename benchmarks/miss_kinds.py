"""Where DoG's wrong answers went wrong: the question's reading, the chain, or the answer line.

Why: the eval's error classes (READS' taxonomy, `kgqa_core.eval.taxonomy`) say whether the gold answer was in view;
they cannot say whether the *reading* of the question chose the walk the question asks for, which is where the
workbench's guidance comes from.  Datasets that carry each question's gold chain (`gold_chain`: DBpedia's MLPQ,
geography, Wikidata, pharmacology, software) say which walk that is, so each miss of a saved evaluation is sorted
into the first stage that went wrong:

=======================  ============================================================================
kind                     what the trace shows
=======================  ============================================================================
not offered              the gold walk (its relations, in order) is not among the walks the reader
                         offered the model: the embedder's offer, or a walk the reader cannot see
offered, not chosen      the gold walk was offered, and the reading chose another
chosen, chain strayed    the reading chose the gold walk, and the chain reached no gold answer
chosen, answered other   the reading chose the gold walk, the chain reached a gold answer, and the
                         answer line named another entity first
no reading               the trace records no question reading (the paper preset, a reading turned off)
=======================  ============================================================================

Beside the kinds, "chain held gold" counts the misses (of any kind) whose chain wrote a gold answer's entity: there
the answer line, not the search, lost it.

A walk matches by its relations in order, whatever the directions (a relation the graph holds both ways is the same
walk); a question naming two entities is left out (its reading joins two walks).  Usage::

    python benchmarks/miss_kinds.py runs/eval/dbpedia_dev runs/eval/dbpedia_fresh [--show]

Each argument is a `kgqa_core eval --out` folder (its `run.json` names the dataset); every method whose traces hold
a reading is sorted.  Prints one row per folder and question type, then the questions with `--show`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.eval.runner import load_results  # noqa: E402
from kgqa_core.trace.grounding import chain_entities  # noqa: E402
from kgqa_core.trace.schema import load_trace  # noqa: E402
from reask import dataset_file  # noqa: E402

KINDS = ("not offered", "offered, not chosen", "chosen, chain strayed", "chosen, answered other", "no reading")


def gold_walk(topic: str, chain: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The relations of the gold chain's walk from `topic`, in order (a branch that leaves the walk is skipped).

    >>> gold_walk("A", [["A", "r", "B"], ["C", "s", "B"], ["C", "t", "D"], ["C", "t", "E"]])
    ('r', 's', 't')
    >>> gold_walk("A", [])
    ()
    """
    at, out = topic, []
    for head, relation, tail in chain:
        if at in (head, tail):
            out.append(relation)
            at = tail if head == at else head
    return tuple(out)


def walk_relations(text: str) -> tuple[str, ...]:
    """A reading plan's relations, directions aside: ``"X -> r -> s (reverse)"`` -> ``('r', 's')``.

    >>> walk_relations("La Jonquera -> n -> southwest (reverse) -> nord")
    ('n', 'southwest', 'nord')
    """
    parts = [p.strip() for p in text.split(" -> ")[1:]]
    return tuple(p[: -len(" (reverse)")] if p.endswith(" (reverse)") else p for p in parts)


def miss_kind(trace: Any, gold: tuple[str, ...], answers: Sequence[str]) -> str:
    """The first stage at which a wrong answer went wrong (`KINDS`), from its trace and its gold walk."""
    reading = trace.extra.get("reading") if isinstance(trace.extra, dict) else None
    plans = (reading or {}).get("plans") or []
    if not plans:
        return "no reading"
    offered = [walk_relations(p.get("text", "")) for p in plans]
    if gold not in offered:
        return "not offered"
    if offered[0] != gold:
        return "offered, not chosen"
    return "chosen, answered other" if held_gold(trace, answers) else "chosen, chain strayed"


def held_gold(trace: Any, answers: Sequence[str]) -> bool:
    """Whether a chain wrote a gold answer's entity (in the graph: an ill triplet reaches nothing)."""
    return any(chain_entities(chain) & set(answers) for chain in trace.chains)


def sort_misses(run_dir: Path) -> list[dict]:
    """One record per wrong answer of the folder's results: id, method, type, question, kind."""
    named = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["dataset"]
    questions = {q.id: q for q in load_dataset(dataset_file(run_dir, Path(named))).questions}
    out = []
    for r in load_results(run_dir):
        q = questions.get(r.get("id"))
        if (r.get("metrics") or {}).get("hits1", 0) >= 1 or not r.get("trace") or q is None or not q.gold_chain:
            continue
        if len(q.topic_entities) != 1:
            continue
        trace = load_trace(run_dir / r["trace"])
        gold = gold_walk(q.topic_entities[0], q.gold_chain)
        kind = miss_kind(trace, gold, q.answers)
        reading = (trace.extra or {}).get("reading") or {}
        plans = reading.get("plans") or [{}]
        chosen = plans[0]
        at = next((i for i, p in enumerate(plans) if walk_relations(p.get("text", "")) == gold), None)
        out.append({"id": r["id"], "method": r.get("method", ""), "type": r.get("type", ""),
                    "question": r.get("question", ""), "kind": kind, "gold": " -> ".join(gold),
                    "read": chosen.get("text", ""), "sure": reading.get("confidence"),
                    "held": held_gold(trace, q.answers),
                    "gold_place": None if at is None else (at + 1, plans[at].get("confidence"))})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="kgqa_core eval --out folders")
    ap.add_argument("--show", action="store_true", help="list each miss with its gold walk and the reading's")
    args = ap.parse_args(argv)
    rows: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    records = []
    for run in args.runs:
        if not (run / "run.json").is_file():
            raise SystemExit(f"{run}: not a `kgqa_core eval --out` folder (no run.json)")
        for m in sort_misses(run):
            for typ in (m["type"], "all"):
                rows[(run.name, m["method"], typ)][m["kind"]] += 1
                rows[(run.name, m["method"], typ)]["held"] += int(m["held"])
            records.append((run.name, m))
    print("| run | method | type | misses | " + " | ".join(KINDS) + " | chain held gold |")
    print("|---|---|---|---|" + "---|" * (len(KINDS) + 1))
    for (run, method, typ), c in sorted(rows.items()):
        print(f"| {run} | {method} | {typ} | {sum(c[k] for k in KINDS)} | " + " | ".join(str(c[k]) for k in KINDS)
              + f" | {c['held']} |")
    if args.show:
        for run, m in records:
            sure = f"{m['sure']:.0%}" if isinstance(m["sure"], (int, float)) else "-"
            held = ", chain held gold" if m["held"] else ""
            place = m["gold_place"]
            offered = f" (offered {place[0]}., {place[1]:.0%})" if place and isinstance(place[1], (int, float)) else ""
            print(f"\n{run} {m['id']} [{m['kind']}{held}] {m['question']}\n    gold walk: {m['gold']}{offered}\n"
                  f"    read:      {m['read']} ({sure})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
