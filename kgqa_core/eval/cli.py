"""`python -m kgqa_core eval ...`: the batch evaluation command.

The lead's ``kgqa_core/cli.py`` calls `add_eval_parser` on its subparsers;
the parser's default ``func`` is `run_eval_command`, which returns the exit
code.  Every expected failure (bad dataset, unknown method, model that will
not load, an output directory of another run) is one clear message on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_eval_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "eval",
        help="run methods over a JSONL dataset and report Hits@1, F1, ill triplets, cost",
        description=(
            "Evaluate methods on a dataset (one question a line). Writes one trace per question and "
            "method, results.jsonl and summary.json into --out; re-running skips finished pairs."
        ),
    )
    p.add_argument("--dataset", required=True, help="JSONL dataset file")
    p.add_argument("--methods", required=True, help="comma-separated methods, e.g. dog,cot,direct,reads,rok,lpkg")
    p.add_argument("--model", default=None, help="model name, folder, .gguf file or HF id (default: the app's default model)")
    p.add_argument(
        "--backend", default=None, choices=["llama.cpp", "transformers"],
        help="model backend (default: $KGQA_BACKEND, else llama.cpp on a CPU-only machine when installed)",
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N questions")
    p.add_argument(
        "--per-type", type=int, default=None, metavar="N",
        help="only the first N questions of each question type (e.g. 1hop, 2hop); combines with --limit",
    )
    p.add_argument(
        "--types", default=None, metavar="T1,T2",
        help="only questions of these types (e.g. 2hop); a later run without it adds the rest to the same --out",
    )
    p.add_argument(
        "--shard", default=None, metavar="K/N",
        help="run only the K-th of N slices of the questions; start N processes with the same --out "
             "(e.g. OMP_NUM_THREADS=1 each) to use N cores, then re-run without --shard for the full summary",
    )
    p.add_argument(
        "--workers", default="auto", metavar="N|auto",
        help="run the questions on N worker processes at once, each with its share of the cores, into one "
             "results file (default auto: one per four physical cores for an in-process llama.cpp model, so "
             "one on two cores, where two workers were no faster; 1 for a model server or the transformers backend)",
    )
    p.add_argument("--beam-size", default=None, help="beam size for methods that use one (DoG)")
    p.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE",
        help="method parameter (repeatable); each must belong to one of --methods "
             "(python -m kgqa_core methods lists them)",
    )
    p.add_argument("--preset", default=None, choices=["workbench", "paper"],
                   help="paper: every method as published, without the workbench's guidance; workbench: the "
                        "workbench's defaults (the default). Same as --param preset=NAME; recorded in run.json, "
                        "so a resumed run with another preset is refused")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="your words for the graphs' relations, one relation a line: 'relation: word, word'; passed "
                        "to every question and recorded in run.json and summary.json")
    p.add_argument("--seed", type=int, default=0)
    from ..models.server_model import add_server_arguments

    add_server_arguments(p)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown (for docs)")
    p.set_defaults(func=run_eval_command)
    return p


def _parse_params(args: argparse.Namespace) -> dict[str, Any]:
    """``--param`` pairs, ``--preset`` and ``--beam-size``; `run_eval` checks them against the methods' declarations."""
    from ..parameters import parse_pairs, preset_flag

    params = preset_flag(parse_pairs(args.param), getattr(args, "preset", None))
    if args.beam_size is not None:
        params["beam_size"] = args.beam_size
    return params


def run_eval_command(args: argparse.Namespace) -> int:
    from ..methods.base import METHODS
    from .dataset import DatasetFormatError
    from .runner import EvalConfigError, UnknownQuestionTypeError, run_eval

    def fail(msg: str) -> int:
        print(f"error: {msg}", file=sys.stderr)
        return 2

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        return fail("--methods is empty; choose from: " + ", ".join(METHODS))
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        return fail(f"unknown method {unknown[0]!r}; choose from: {', '.join(METHODS)}")
    missing = _unavailable(methods)
    if missing:
        return fail(missing)
    if args.limit is not None and args.limit < 1:
        return fail("--limit must be at least 1")
    if args.per_type is not None and args.per_type < 1:
        return fail("--per-type must be at least 1")
    shard = None
    if args.shard is not None:
        try:
            k_text, n_text = args.shard.split("/")
            shard = (int(k_text), int(n_text))
        except ValueError:
            return fail(f"--shard must look like K/N (e.g. 1/2), got {args.shard!r}")
    from .parallel import WorkersError, parse_workers

    try:
        parse_workers(args.workers)
    except WorkersError as exc:
        return fail(str(exc))
    try:
        params = _parse_params(args)
    except ValueError as exc:
        return fail(str(exc))
    vocabulary = None
    if getattr(args, "vocabulary", None):
        from ..reading.vocabulary import RelationVocabulary, VocabularyError

        try:
            vocabulary = RelationVocabulary.read(args.vocabulary)
        except VocabularyError as exc:
            return fail(f"--vocabulary {exc}")
    model_name = args.model
    if not model_name:
        from ..models import DEFAULT_APP_MODEL

        model_name = DEFAULT_APP_MODEL

    from ..models.server_http import ServerError
    from ..models.server_model import server_from_args

    try:
        server = server_from_args(args, None if args.no_progress else (lambda m: print(m, file=sys.stderr)))
    except (ServerError, ValueError, OSError) as exc:
        return fail(str(exc))
    if server is not None:
        model_name = f"{server.name} @ {server.url}"
    from .parallel import WorkerFailure, resolve_workers

    asked = parse_workers(args.workers)  # None: auto
    if asked is not None and asked > 1 and server is not None:
        return fail("--workers: a model server runs its own requests in parallel; "
                    "use --workers 1 (or auto) with --server")
    if asked is not None and asked > 1 and shard is not None:
        return fail("--workers: a --shard process runs its slice in one process; "
                    "use --workers 1 (or auto) with --shard")
    workers = 1 if shard is not None else resolve_workers(args.workers, getattr(args, "backend", None),
                                                          server=server is not None)
    try:
        summary = run_eval(
            args.dataset, methods, model_name, args.out, limit=args.limit, params=params, model=server,
            progress=not args.no_progress, seed=args.seed, per_type=args.per_type, shard=shard,
            types=[t.strip() for t in args.types.split(",") if t.strip()] if args.types else None,
            backend=getattr(args, "backend", None), vocabulary=vocabulary,
            on_warning=lambda msg: print(f"warning: {msg}", file=sys.stderr), workers=workers,
        )
    except DatasetFormatError as exc:
        return fail(str(exc))
    except (EvalConfigError, UnknownQuestionTypeError, WorkerFailure) as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        print("\ninterrupted; finished pairs are saved - re-run the same command to resume", file=sys.stderr)
        return 130
    except Exception as exc:
        from ..models import ModelLoadError

        if isinstance(exc, (ModelLoadError, ValueError, OSError)):
            return fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise
    print(
        f"{summary.n_questions} questions x {len(summary.methods)} methods, model {summary.model}"
        f"{' on ' + summary.backend if summary.backend else ''}, preset {summary.preset}"
        f"{', vocabulary ' + summary.vocabulary['source'] if summary.vocabulary else ''}: "
        f"ran {summary.ran}, resumed {summary.skipped}, method errors {summary.failed}"
    )
    print(summary.table(markdown=args.markdown))
    print(f"\nwritten to {summary.out_dir}/ (results.jsonl, summary.json, traces/)")
    for problem in summary.worker_errors:  # the others' results are kept; re-running does what it left
        print(f"error: {problem}; the other workers' results are kept - re-run the same command to resume",
              file=sys.stderr)
    return 1 if summary.worker_errors else 0


def _unavailable(methods: list[str]) -> str:
    """A message naming methods whose module does not import yet, or ''."""
    import importlib

    from ..methods.base import METHODS

    for m in methods:
        try:
            importlib.import_module(METHODS[m])
        except ImportError as exc:
            return f"method {m!r} is not available: cannot import {METHODS[m]} ({exc})"
    return ""


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (``python -m kgqa_core.eval.cli``) until the main CLI wires `eval` in."""
    parser = argparse.ArgumentParser(prog="kgqa_core")
    sub = parser.add_subparsers(dest="command", required=True)
    add_eval_parser(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
