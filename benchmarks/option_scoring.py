"""Option scoring on llama.cpp: one fork per option (before) against the token trie (now), in one run.

Run from the repository root on the traces of any evaluation (their model calls keep prompts and options):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/option_scoring.py \\
        --traces 'runs/eval/md4/*/main/traces/*/*.json' --model qwen2.5-coder-1.5b --limit 40

Every recorded call that scored options after a prompt (the question's reading, READS' search, prune and
answer choices, LPKG's) is scored again after the same prompt, both ways, in alternating order:

* ``forks``: `ModelBase._score_batch`, one KV fork per option, every option's tokens read (the previous way);
* ``trie``: `LlamaCppModel._score_batch`, the options as a token trie (`models/option_trie.py`), a prefix
  they share read once.

It prints per purpose the calls, options, tokens fed each way, seconds each way and their ratio, and how far
each way's log-probs lie from scoring each option alone after the prompt (``--reference``, slower): llama.cpp's
log-probs move with how a batch is cut (issue 32), and the trie's should not where it fits one decode call.
"""

from __future__ import annotations

import argparse
import ast
import glob
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def recorded_calls(pattern: str) -> list[tuple[str, str, list[str]]]:
    """(purpose, prompt, options) of every traced call that scored options after a kept prompt."""
    out = []
    for path in sorted(glob.glob(pattern)):
        try:
            trace = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        for step in trace.get("steps") or []:
            for call in step.get("model_calls") or []:
                if call.get("output_tokens") or not call.get("prompt") or not call.get("output"):
                    continue
                options = []
                for line in call["output"].splitlines():
                    text, sep, _ = line.rpartition(": ")
                    try:
                        options.append(ast.literal_eval(text)) if sep else None
                    except (ValueError, SyntaxError):
                        options = []
                        break
                if len(options) > 1 and all(isinstance(o, str) for o in options):
                    out.append((call["purpose"].split(" order")[0], call["prompt"], options))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", required=True, help="a glob of trace files (quote it)")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--limit", type=int, default=40, help="at most this many calls (spread over the purposes)")
    ap.add_argument("--reference", action="store_true", help="also score each option alone (the exact reference)")
    args = ap.parse_args()

    from kgqa_core.models import load_model
    from kgqa_core.models.base import ModelBase
    from kgqa_core.models.option_trie import OptionTrie, scored_alone

    calls = recorded_calls(args.traces)
    if not calls:
        sys.exit(f"--traces {args.traces!r}: no traced call with a prompt and scored options")
    by_purpose: dict[str, list] = defaultdict(list)
    for c in calls:
        by_purpose[c[0]].append(c)
    picked = []
    while len(picked) < args.limit and any(by_purpose.values()):
        for purpose in list(by_purpose):
            if by_purpose[purpose] and len(picked) < args.limit:
                picked.append(by_purpose[purpose].pop(0))
    model = load_model(args.model, backend="llama.cpp")
    if model.backend != "llama.cpp":
        sys.exit("this benchmark compares llama.cpp's two ways of scoring options")

    rows: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for n, (purpose, prompt, options) in enumerate(picked):
        model.clear_prefix_cache()
        state = model.prefill(model.encode(prompt))
        ids = [model.continuation_ids(list(state.ids), prompt, o) for o in options]
        timed = {}
        ways = [("forks", lambda: ModelBase._score_batch(model, state, ids)), ("trie", lambda: model._score_batch(state, ids))]
        for name, run in (ways if n % 2 == 0 else ways[::-1]):
            t = time.perf_counter()
            timed[name] = (run(), time.perf_counter() - t)
        model.release(state)
        r = rows[purpose]
        r["options"].append(len(options))
        r["fed forks"].append(sum(max(len(i) - 1, 0) for i in ids))
        r["fed trie"].append(len(OptionTrie.of(ids).nodes))
        r["s forks"].append(timed["forks"][1])
        r["s trie"].append(timed["trie"][1])
        best = {k: max(range(len(ids)), key=lambda i: sum(v[0][i])) for k, v in timed.items()}
        r["same best"].append(best["forks"] == best["trie"])
        if args.reference:
            ref = [scored_alone(model, prompt, i) for i in ids]
            for name in ("forks", "trie"):
                r[f"dev {name}"].append(max(abs(a - b) for got, want in zip(timed[name][0], ref)
                                            for a, b in zip(got, want)) if any(ref) else 0.0)
        print(f"[{n + 1}/{len(picked)}] {purpose}: {len(options)} options, fed {r['fed forks'][-1]} -> "
              f"{r['fed trie'][-1]} tokens, {timed['forks'][1]:.2f} s -> {timed['trie'][1]:.2f} s", flush=True)

    med = statistics.median
    head = ["purpose", "calls", "options (median)", "tokens fed: forks", "trie", "seconds: forks", "trie",
            "ratio (sum)", "same best"]
    if args.reference:
        head += ["max |log-prob - alone|: forks", "trie"]
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    total = defaultdict(float)
    for purpose, r in rows.items():
        cells = [purpose, len(r["options"]), med(r["options"]), med(r["fed forks"]), med(r["fed trie"]),
                 f"{med(r['s forks']):.2f}", f"{med(r['s trie']):.2f}", f"{sum(r['s trie']) / sum(r['s forks']):.2f}x",
                 f"{sum(r['same best'])}/{len(r['same best'])}"]
        if args.reference:
            cells += [f"{max(r['dev forks']):.3f}", f"{max(r['dev trie']):.3f}"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
        total["forks"] += sum(r["s forks"])
        total["trie"] += sum(r["s trie"])
    print(f"\nall calls: {total['trie']:.1f} s against {total['forks']:.1f} s ({total['trie'] / total['forks']:.2f}x)")


if __name__ == "__main__":
    main()
