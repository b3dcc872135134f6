"""``python -m kgqa_core generate``: benchmark questions from a graph file.

    python -m kgqa_core generate --graph movies.tsv --patterns 2p,2i --n 20 --out questions.jsonl

The output is an evaluation dataset (JSONL) whose lines reference the graph
file (relative to the output file), so ``python -m kgqa_core eval`` can run
methods on it directly.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from .generate import GenerationError, generate_questions
from .patterns import PATTERNS, PatternError, parse_pattern_list
from .verbalise import make_verbaliser


def add_generate_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "generate",
        help="generate benchmark questions from a graph by grounding LPKG patterns",
        description="Ground KG patterns (LPKG) in a graph and write questions with all their answers as JSONL.",
    )
    p.add_argument("--graph", required=True, help="graph file (TSV, CSV, JSON, JSONL, N-Triples, Turtle, h -> r -> t)")
    p.add_argument("--patterns", default="all", help=f"comma-separated patterns from {','.join(PATTERNS)} (default: all)")
    p.add_argument("--n", type=int, default=20, help="number of questions in total (default 20)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--verbaliser", choices=("template", "model"), default="template",
                   help="template (always works) or model (App. C.1 prompts; falls back to the template)")
    p.add_argument("--model", default="qwen2.5-coder-1.5b", help="model for --verbaliser model")
    p.add_argument("--inline", action="store_true",
                   help="carry each question's neighbourhood inline instead of referencing the graph file")
    p.add_argument("--out", required=True, help="output JSONL file")
    p.set_defaults(func=run_generate_command)
    return p


def run_generate_command(args: argparse.Namespace) -> int:
    from ..graph.loaders import GraphFormatError, load_graph

    try:
        patterns = parse_pattern_list(args.patterns)
    except PatternError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.n <= 0:
        print(f"error: --n must be positive, got {args.n}", file=sys.stderr)
        return 2
    graph_path = Path(args.graph)
    try:
        graph = load_graph(graph_path)
    except (GraphFormatError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    model = None
    if args.verbaliser == "model":
        from ..models import load_model

        try:
            model = load_model(args.model)
        except Exception as exc:  # a missing model is a user problem, not a crash
            print(f"error: could not load model {args.model!r}: {exc}", file=sys.stderr)
            return 2
    out = Path(args.out)
    graph_file = None
    if not args.inline:
        try:
            graph_file = _graph_beside(graph_path, out.parent)
        except OSError as exc:
            print(f"error: could not place the graph beside {out}: {exc}", file=sys.stderr)
            return 2
    try:
        records = generate_questions(
            graph, patterns, args.n, seed=args.seed, verbaliser=make_verbaliser(args.verbaliser, model),
            graph_file=graph_file,
        )
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    from ..files import atomic_write_text, jsonl_line

    # JSON Lines with line separators escaped, written atomically (eval's dataset format)
    atomic_write_text(out, "".join(jsonl_line(r) + "\n" for r in records))
    counts = Counter(r["type"] for r in records)
    summary = ", ".join(f"{p}: {counts[p]}" for p in patterns if counts[p])
    print(f"wrote {len(records)} questions to {out} ({summary})")
    missing = [p for p in patterns if not counts[p]]
    if missing:
        print(f"note: no non-trivial instance found for {', '.join(missing)} in this graph", file=sys.stderr)
    if len(records) < args.n:
        print(f"note: only {len(records)} distinct questions could be generated (asked for {args.n})", file=sys.stderr)
    return 0


def _graph_beside(graph_path: Path, folder: Path) -> str:
    """``graph_file`` for a dataset in ``folder``: the graph's path inside it, linking or copying it in if needed.

    A dataset may only name graph files inside its own folder (so a dataset
    cannot make the workbench read files elsewhere); a graph kept elsewhere is
    hard-linked (or copied) beside the dataset under its own name.
    """
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    src, base = graph_path.resolve(), folder.resolve()
    if src.is_relative_to(base):
        return src.relative_to(base).as_posix()
    target = base / src.name
    if target.exists() and not (target.stat().st_size == src.stat().st_size and target.read_bytes() == src.read_bytes()):
        import hashlib

        target = base / f"{src.stem}-{hashlib.sha256(str(src).encode()).hexdigest()[:8]}{src.suffix}"
    if not target.exists():
        try:
            os.link(src, target)
        except OSError:
            shutil.copyfile(src, target)
        print(f"note: the graph was placed beside the dataset as {target.name} "
              "(a dataset names graph files inside its own folder)", file=sys.stderr)
    return target.name
