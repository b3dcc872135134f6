"""DoG before/after issue 32 on the multi-domain dev benchmark: accuracy, tokens written, prompt tokens read.

Reads eval folders written by ``python -m kgqa_core eval`` (one sub-folder per domain, as below) and prints
one table: per domain and run, n, Hits@1, F1, the median tokens a question wrote and the median prompt tokens
DoG's prompt read beyond the cached prefix (``prompt_tokens - prompt_tokens_cached`` in the trace), and how
often the free-text cap cut a chain and the prompt budget applied.  Only questions every run answered are
compared.

    for d in geography dbpedia wikidata metaqa; do   # types: see datasets/multidomain/README.md
      OMP_NUM_THREADS=1 .venv/bin/python -m kgqa_core eval --dataset <domain file> --methods dog \\
          --model qwen2.5-coder-1.5b --per-type 1 --types <its types> --out runs/fx/after/$d [--param ...]
    done
    .venv/bin/python benchmarks/dog_short_text.py before=runs/fx/before after=runs/fx/after
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _rows(folder: Path) -> dict[str, dict]:
    out = {}
    path = folder / "results.jsonl"
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("method") != "dog" or row.get("error"):
            continue
        trace = json.loads((folder / row["trace"]).read_text(encoding="utf-8"))
        extra = trace.get("extra", {})
        row["uncached"] = extra.get("prompt_tokens", 0) - extra.get("prompt_tokens_cached", 0)
        row["prompt_tokens"] = extra.get("prompt_tokens", 0)
        row["cut"] = bool(extra.get("free_text_cuts"))
        row["budgeted"] = bool((extra.get("prompt_budget") or {}).get("applied"))
        out[row["id"]] = row
    return out


def main(argv: list[str]) -> int:
    runs = dict(a.split("=", 1) for a in argv)
    domains = sorted({p.name for folder in runs.values() for p in Path(folder).iterdir() if p.is_dir()})
    print("| domain | run | n | Hits@1 | F1 | tokens written (median) | prompt tokens beyond cache (median) "
          "| prompt tokens (median) | cut | budgeted |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[dict]] = {name: [] for name in runs}
    for domain in domains + ["all"]:
        if domain == "all":
            per_run = {name: totals[name] for name in runs}
        else:
            loaded = {name: _rows(Path(folder) / domain) for name, folder in runs.items()}
            common = set.intersection(*(set(r) for r in loaded.values())) if loaded else set()
            per_run = {name: [rows[i] for i in sorted(common)] for name, rows in loaded.items()}
            for name, rows in per_run.items():
                totals[name].extend(rows)
        for name, rows in per_run.items():
            if not rows:
                continue
            m = [r["metrics"] for r in rows]
            print(f"| {domain} | {name} | {len(rows)} | {statistics.mean(x['hits1'] for x in m):.2f} | "
                  f"{statistics.mean(x['f1'] for x in m):.2f} | {statistics.median(x['tokens_out'] for x in m):.0f} | "
                  f"{statistics.median(r['uncached'] for r in rows):.0f} | "
                  f"{statistics.median(r['prompt_tokens'] for r in rows):.0f} | {sum(r['cut'] for r in rows)} | "
                  f"{sum(r['budgeted'] for r in rows)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
