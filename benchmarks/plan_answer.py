"""Would the reading's likeliest plan choose DoG's first answer better than the model does?  Over saved traces.

    .venv/bin/python benchmarks/plan_answer.py runs/eval/s61base/dbpedia/main --margin 0.15

No model: reads the results and traces of an evaluation run (`benchmarks/multidomain.py` or `kgqa_core eval`).
For each question, the ends the chain walked along each of the reading's plans (relation paths from the topic
entity, `extra.reading.plans`) are found among the chain's triplets.  The rule tried: when the model's first
answer is the end of a plan less likely than the likeliest plan the chain walked (by at least ``--margin``), and
not of a plan that is the likeliest one cut short, the likeliest plan's first end becomes the first answer.
Printed: every question the rule would change, gained or lost against the gold answers, and the totals.  Not a
default of the workbench (docs/benchmarks.md, "Names in another language held whole", the re-run below it).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

REVERSE = " (reverse)"


def plan_hops(text: str) -> list[str]:
    """A plan's hops from its text ("Topic -> r -> s (reverse)"): the relations after the topic entity."""
    return [p.strip() for p in text.split(" -> ")][1:]


def walked_ends(chain: list[dict], topic: str, hops: list[str]) -> list[str]:
    """The entities the chain's triplets reach from `topic` along `hops`, in the chain's order ([] if none)."""
    front, order = {topic}, []
    for hop in hops:
        backwards = hop.endswith(REVERSE)
        relation = hop[: -len(REVERSE)] if backwards else hop
        order = [(t["head"] if backwards else t["tail"]) for t in chain if t["relation"] == relation
                 and (t["tail"] if backwards else t["head"]) in front]
        if not order:
            return []
        front = set(order)
    return list(dict.fromkeys(order))


def plan_choice(trace: dict, margin: float) -> tuple[str, float, float] | None:
    """(the new first answer, the likeliest walked plan's confidence, the model's plan's), or None: unchanged."""
    plans = (trace.get("extra", {}).get("reading") or {}).get("plans") or []
    if not trace.get("chains") or not plans or not trace.get("answers"):
        return None
    chain, topic, first = trace["chains"][0], trace["topic_entities"][0], trace["answers"][0]["text"]
    walked = [(p["confidence"], plan_hops(p["text"]), walked_ends(chain, topic, plan_hops(p["text"])))
              for p in plans]
    walked = [w for w in walked if w[2]]
    if not walked:
        return None
    best = max(walked, key=lambda w: w[0])
    mine = [w for w in walked if first in w[2]]
    if first in best[2] or not mine:
        return None
    if any(best[1][: len(w[1])] == w[1] for w in mine):
        return None  # the model answered where the likeliest plan passes through: it stopped, the plan went on
    if best[0] - max(w[0] for w in mine) < margin:
        return None
    return best[2][0], best[0], max(w[0] for w in mine)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a run folder holding results.jsonl and its traces")
    ap.add_argument("--margin", type=float, default=0.0, help="how much likelier the plan must be (probability)")
    args = ap.parse_args(argv)
    gained = lost = changed = 0
    for line in (args.run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        result = json.loads(line)
        trace = json.loads((args.run / result["trace"]).read_text(encoding="utf-8"))
        choice = plan_choice(trace, args.margin)
        if choice is None:
            continue
        changed += 1
        gold = {g.lower() for g in result["gold"]}
        new, old = choice[0].lower() in gold, result["metrics"]["hits1"] > 0
        gained += new and not old
        lost += old and not new
        verdict = "gained" if new and not old else "lost" if old and not new else "same"
        print(f"{verdict}: {result['question'][:90]!r}: {trace['answers'][0]['text']!r} -> {choice[0]!r} "
              f"(plans {choice[1]:.2f} against {choice[2]:.2f})")
    print(f"changed {changed}, gained {gained}, lost {lost}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
