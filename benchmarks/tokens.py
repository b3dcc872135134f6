"""What a question costs per method: prompt tokens read, tokens written, model calls, seconds, and where the time went.

Run from the repository root (one process; the lead runs the 1.5B figures):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/tokens.py --per-type 2 --out runs/tokens.json \\
        --variant short=max_new_tokens=96

For each domain of the multi-domain dev benchmark (datasets/multidomain, README there; MetaQA's whole
KB too), the first ``--per-type`` questions of each type are asked over the domain's whole graph by
each method (dog, direct, reads, rok by default), with the current defaults and with each
``--variant NAME=PARAM=VALUE,PARAM=VALUE`` (repeatable: e.g. the previous defaults, to compare them
with today's in one run).  A variant runs only for the methods that declare one of its parameters;
``model.NAME=VALUE`` sets the loaded model's attribute for the variant's runs instead (e.g.
``--variant reuse=model.exact=false``: llama.cpp reusing any cached prefix, not only exact ones).
Per question it records the trace's cost breakdown (`Trace.costs`): prompt tokens read beyond the
cached prefix, tokens served from the cache, tokens written (and of them those the model chose, the
rest being the runs a DoG triplet's trie forced), model calls, wall seconds and seconds
per phase.  It prints medians per method and domain, the median seconds per phase, and for every
variant the ratios of its medians to the defaults' on the same questions.

The settings of one question run back to back, each first on its share of the questions (the order
rotates from question to question: the first run pays what the process computes once per question); the
question readings' cache, the prompts held in memory and the embedded triplets are cleared before every
run, so none finds another's prompt or embeddings (the instructions and examples are loaded from the prefix cache
on disk, as for any new question of a session).  ``--shard K/N`` runs every N-th question (start K);
``--out FILE`` keeps every row as JSON (a later run with ``--report FILE ...`` prints the tables of
several shards' files together).  ``--reask`` asks each question a second time right after its
default run, with nothing cleared (variant ``re-ask``: what Explore's re-ask and a second look cost, the
question's reading and the prompt served from the session's caches).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.datasets.multidomain import DEV_DOMAINS, TWO_ENTITY_SETS  # noqa: E402

DOMAINS = {name: ROOT / path for name, path in (DEV_DOMAINS | TWO_ENTITY_SETS).items()}
TYPES = ["1hop", "2hop", "3hop"]  # the readers plan at most 3 hops (as benchmarks/multidomain.py)
# the dev domains' types (4-hop: Wikidata's and geography's longer questions; 2i: the two-entity sets')
ALL_TYPES = TYPES + ["4hop", "2i"]
METRICS = ["prompt_read", "written", "chosen", "calls", "seconds"]
DEFAULT = "default"
REASK = "re-ask"  # the default run again, the readings and the prefix cache as the first left them


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    """``name=param=value,param=value`` -> (name, {param: value}); a clear message when malformed."""
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME=PARAM=VALUE[,PARAM=VALUE]")
    params = {}
    for item in rest.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise argparse.ArgumentTypeError(f"--variant {text!r}: {item!r} is not PARAM=VALUE")
        params[key.strip()] = value.strip()
    if name == DEFAULT:
        raise argparse.ArgumentTypeError(f"--variant: the name {DEFAULT!r} is the defaults' own")
    return name, params


MODEL = "model."  # a variant's setting of the loaded model, not of a method (e.g. model.exact=false)


def model_settings(params: dict[str, str]) -> dict[str, Any]:
    """A variant's ``model.NAME=VALUE`` settings (true/false read as booleans); the rest are methods' parameters."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key.startswith(MODEL):
            low = str(value).lower()
            out[key] = low in ("1", "true", "yes") if low in ("0", "1", "true", "false", "yes", "no") else value
    return out


def questions(domain: str, per_type: int, types: list[str] = TYPES) -> list[Any]:
    from kgqa_core.eval.dataset import load_dataset

    ds = load_dataset(DOMAINS[domain])
    out = []
    for qtype in types:
        out += [q for q in ds if q.type == qtype][:per_type]
    return out


def row_of(trace: Any, domain: str, q: Any, method: str, variant: str) -> dict[str, Any]:
    from kgqa_core.eval.metrics import predicted_answer_forms, score_answers

    c = trace.costs
    scores = score_answers(predicted_answer_forms(trace), q.answers)
    return {
        "domain": domain, "question": q.id, "type": q.type, "method": method, "variant": variant,
        "prompt_read": c.prompt_tokens_read if c else None, "cached": c.prompt_tokens_cached if c else None,
        "written": c.tokens_written if c else trace.tokens_out, "calls": trace.model_calls,
        # written less what a triplet's trie forced (fed with the model's next choice, no decoding step of its own)
        "chosen": c.tokens_chosen if c else None,
        "seconds": round(trace.seconds, 3), "phases": dict(c.seconds) if c else {},
        "error": trace.error, "answers": trace.answer_texts[:5], "hits1": scores.hits1, "f1": round(scores.f1, 4),
        "chain": [[t.head, t.relation, t.tail] for t in trace.best_chain],
    }


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from kgqa_core.methods.base import MethodRequest, applicable_params, method_spec, run_method
    from kgqa_core.models import load_model
    from kgqa_core.reading.guidance import clear_readings

    def forget_embeddings() -> None:
        from kgqa_core.graph.embeddings import load_embedder

        embedder = load_embedder()
        if embedder is not None:
            embedder.forget()

    model = load_model(args.model)
    variants = [(DEFAULT, {})] + list(args.variant)
    rows: list[dict[str, Any]] = []
    k, n = args.shard
    index = 0
    for domain in args.domains:
        for q in questions(domain, args.per_type, args.types):
            index += 1
            if (index - 1) % n != k - 1:
                continue
            graph = q.graph()
            for method in args.methods:
                spec = method_spec(method)
                mine = [(name, applicable_params(spec, p) | model_settings(p)) for name, p in variants]
                mine = [(name, p) for name, p in mine if name == DEFAULT or p]
                shift = index % len(mine)  # each setting first on its share of the questions (the first pays
                mine = mine[shift:] + mine[:shift]  # what a process computes once per question, e.g. context ranking)
                runs = [(name, params, True) for name, params in mine]
                if args.reask:  # the same question again, straight after: Explore's re-ask, the session's caches warm
                    at = next(i for i, (name, _, _) in enumerate(runs) if name == DEFAULT)
                    runs.insert(at + 1, (REASK, {}, False))
                for name, params, cold_reading in runs:
                    if cold_reading:  # as a new question: nothing of another run's reading, prompt or embedded
                        clear_readings()  # triplets in memory (a run after one that embedded more candidates
                        model.clear_prefix_cache()  # would find its own embedded already)
                        forget_embeddings()
                    settings = model_settings(params)
                    kept = {key: getattr(model, key[len(MODEL):]) for key in settings}
                    for key, value in settings.items():
                        setattr(model, key[len(MODEL):], value)
                    request = MethodRequest(graph=graph, question=q.question, model=model,
                                            topic_entities=list(q.topic_entities), seed=args.seed,
                                            params={k: v for k, v in params.items() if k not in settings})
                    t0 = time.perf_counter()
                    try:
                        trace = run_method(method, request)
                    finally:
                        for key, value in kept.items():
                            setattr(model, key[len(MODEL):], value)
                    row = row_of(trace, domain, q, method, name)
                    rows.append(row)
                    print(f"{domain} {q.id} {method} {name}: {row['prompt_read']} read, {row['written']} written, "
                          f"{row['calls']} calls, {time.perf_counter() - t0:.1f} s"
                          + (f" (error: {trace.error[:80]})" if trace.error else ""), flush=True)
                    if args.out:
                        args.out.write_text(json.dumps({"model": args.model, "rows": rows}, indent=1))
    return rows


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(rows: list[dict[str, Any]], model: str) -> None:
    print(f"\n{model}: medians per question")
    print("| variant | method | domain | n | prompt tokens read | tokens written | of them chosen by the model "
          "| model calls | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["variant"] != DEFAULT, r["variant"], r["method"]) for r in rows})
    for _, variant, method in keys:
        mine = [r for r in rows if r["variant"] == variant and r["method"] == method]
        for domain in sorted({r["domain"] for r in mine}) + ["all"]:
            sel = [r for r in mine if domain == "all" or r["domain"] == domain]
            cells = [f"{median([r[m] for r in sel if r.get(m) is not None]):.1f}" for m in METRICS]
            print(f"| {variant} | {method} | {domain} | {len(sel)} | " + " | ".join(cells) + " |")
    print("\nmedian seconds per phase (all domains)")
    phases = sorted({p for r in rows for p in r["phases"]})
    print("| variant | method | " + " | ".join(phases) + " |")
    print("|---|---|" + "---|" * len(phases))
    for _, variant, method in keys:
        sel = [r for r in rows if r["variant"] == variant and r["method"] == method]
        print(f"| {variant} | {method} | "
              + " | ".join(f"{median([r['phases'].get(p, 0.0) for r in sel]):.2f}" for p in phases) + " |")
    by = {(r["variant"], r["method"], r["domain"], r["question"]): r for r in rows}
    ratios = []
    for _, variant, method in keys:
        if variant == DEFAULT:
            continue
        pairs = [(by[(DEFAULT, method, d, q)], r) for (v, m, d, q), r in by.items()
                 if v == variant and m == method and (DEFAULT, method, d, q) in by]
        if not pairs:
            continue
        cells = []
        for m in METRICS:
            base = median([a[m] for a, _ in pairs if a.get(m) is not None])
            new = median([b[m] for _, b in pairs if b.get(m) is not None])
            cells.append(f"{new / base:.2f}" if base else "-")
        same = sum(a["answers"][:1] == b["answers"][:1] for a, b in pairs)
        hits = [(a.get("hits1"), b.get("hits1")) for a, b in pairs]
        hits_cell = (f"{sum(b for _, b in hits):g} / {sum(a for a, _ in hits):g}"
                     if all(a is not None and b is not None for a, b in hits) else "-")
        ratios.append(f"| {variant} / {DEFAULT} | {method} | {len(pairs)} | " + " | ".join(cells)
                      + f" | {same}/{len(pairs)} | {hits_cell} |")
    if ratios:
        print("\nratios of the medians, variant / defaults, on the same questions")
        print("| runs | method | n | prompt tokens read | tokens written | of them chosen | model calls | seconds "
              "| same first answer | Hits@1, variant / defaults |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(ratios))


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: expected K/N, e.g. 1/2") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--shard {text!r}: K must be between 1 and N")
    return k, n


def _list(choices: list[str], what: str):
    def parse(text: str) -> list[str]:
        items = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in items if x not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(f"--{what} {text!r}: choose from {', '.join(choices)}")
        return items
    return parse


def main(argv: list[str] | None = None) -> int:
    from kgqa_core.methods.base import METHODS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--methods", type=_list(list(METHODS), "methods"), default=["dog", "direct", "reads", "rok"])
    ap.add_argument("--domains", type=_list(list(DOMAINS), "domains"), default=list(DOMAINS))
    ap.add_argument("--per-type", type=int, default=2, help="questions of each type per domain")
    ap.add_argument("--types", type=_list(ALL_TYPES, "types"), default=TYPES,
                    help="question types, comma-separated (default 1hop,2hop,3hop; 4hop: Wikidata's and geography's longer ones; 2i: the two-entity sets)")
    ap.add_argument("--variant", type=parse_variant, action="append", default=[],
                    help="NAME=PARAM=VALUE[,PARAM=VALUE]: the methods declaring one of the parameters run with them too")
    ap.add_argument("--reask", action="store_true",
                    help="ask each question again right after its default run (Explore's re-ask): variant 're-ask'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shard", type=_shard, default=(1, 1), help="K/N: every N-th question, starting at the K-th")
    ap.add_argument("--out", type=Path, default=None, help="keep every row as JSON here")
    ap.add_argument("--report", type=Path, nargs="*", default=None,
                    help="print the tables of earlier --out files (several shards) and run nothing")
    args = ap.parse_args(argv)
    if args.report:
        rows, model = [], ""
        for path in args.report:
            data = json.loads(path.read_text())
            rows += data["rows"]
            model = data.get("model", model)
        report(rows, model)
        return 0
    rows = run(args)
    report(rows, args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
