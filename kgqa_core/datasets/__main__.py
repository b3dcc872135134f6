"""`python -m kgqa_core.datasets metaqa --hops 1,2 --n 200 --max-triplets 200 --seed 0 --out FILE.jsonl`.

With `--full-kb` the questions (1-, 2- and 3-hop) are asked over the whole KB instead of a cut.

The multi-domain dev benchmark (``datasets/multidomain/``, see its README), one subcommand per source,
each writing ``<domain>_dev.jsonl`` and ``<domain>_kb.tsv.gz`` into ``--out``:

    python -m kgqa_core.datasets mlpq --raw ../shared/data/mlpq --out datasets/multidomain/
    python -m kgqa_core.datasets geoquery --raw ../shared/data/geoquery --out datasets/multidomain/
    python -m kgqa_core.datasets mquake --raw ../shared/data/mquake --out datasets/multidomain/
    python -m kgqa_core.datasets twowiki --raw ../shared/data/2wikimultihopqa --out datasets/multidomain/
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..bounds import int_option


def main(argv: list[str] | None = None) -> int:
    """The dataset builders; what they print passes `kgqa_core.terminal` (names come from downloaded data)."""
    from ..terminal import safe_output

    with safe_output():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgqa_core.datasets", description="Build evaluation datasets.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("metaqa", help="cut per-question subgraphs from MetaQA (development split)")
    p.add_argument("--hops", default=None, help="comma-separated hop counts (1 and/or 2; with --full-kb also 3)")
    p.add_argument("--full-kb", action="store_true",
                   help="ask over the whole KB: every question names one graph_file, a copy of the KB beside --out")
    p.add_argument("--n", type=int_option("--n", 1, 1_000_000), default=200,
                   help="number of questions, split evenly across hops")
    p.add_argument("--max-triplets", type=int_option("--max-triplets", 1, 10_000_000), default=200,
                   help="cap on each question's subgraph")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=None, help="MetaQA folder (default: $KGQA_METAQA_DIR or ../shared/data/metaqa)")
    p.add_argument("--out", required=True, help="output JSONL file")
    _add_multidomain_commands(sub)
    args = parser.parse_args(argv)
    if args.command != "metaqa":
        return _build_multidomain(args)

    from ..eval.dataset import load_dataset, write_dataset
    from .metaqa import MetaQAError, build_metaqa, build_metaqa_full_kb

    try:
        hops = [int(h) for h in (args.hops or ("1,2,3" if args.full_kb else "1,2")).split(",") if h.strip()]
    except ValueError:
        print(f"error: --hops {args.hops!r}: expected numbers like 1,2", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        data_dir = Path(args.data_dir) if args.data_dir else None
        if args.full_kb:
            items, stats = build_metaqa_full_kb(hops=hops, n=args.n, seed=args.seed, data_dir=data_dir,
                                                out_dir=Path(args.out).resolve().parent)
        else:
            items, stats = build_metaqa(hops=hops, n=args.n, max_triplets=args.max_triplets, seed=args.seed,
                                        data_dir=data_dir)
    except MetaQAError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = write_dataset(items, args.out)
    load_dataset(out)  # the file we ship must pass our own validation
    print(stats.describe())
    print(f"wrote {len(items)} questions to {out} in {time.perf_counter() - started:.1f}s")
    return 0


def _add_multidomain_commands(sub) -> None:
    helps = {
        "mlpq": "MLPQ dev (English questions over DBpedia paths) -> the dbpedia domain",
        "geoquery": "GeoQuery train/dev path questions over its US geography database -> the geography domain",
        "mquake": "MQuAKE fact chains (true facts only) -> the wikidata domain",
        "twowiki": "2WikiMultihopQA dev evidence chains (compositional and inference questions) -> the twowiki domain",
    }
    for name, text in helps.items():
        p = sub.add_parser(name, help=text)
        p.add_argument("--raw", required=True, help=f"folder with the raw {name} files (e.g. ../shared/data/{name})")
        p.add_argument("--out", required=True, help="output folder (datasets/multidomain/)")
        p.add_argument("--n", type=int, default=40, help="questions per hop count (default 40)")
        p.add_argument("--seed", type=int, default=0)
        if name == "mlpq":
            p.add_argument("--pair", default="en_fr", help="language pair of the English questions (default en_fr)")
        if name == "mquake":
            p.add_argument("--file", default="MQuAKE-hard.json", help="MQuAKE JSON file in --raw")
        if name == "twowiki":
            p.add_argument("--file", default="dev.json", help="2WikiMultihopQA JSON file in --raw (dev or train split)")
            p.add_argument("--limit", type=int_option("--limit", 1, 10_000_000), default=6000,
                           help="read only the first LIMIT records (the graph is the union of their evidences)")


def _build_multidomain(args) -> int:
    from .multidomain import MultiDomainError, write_domain

    started = time.perf_counter()
    try:
        if args.command == "mlpq":
            from .mlpq import DOMAIN, build_mlpq

            items, graph, stats = build_mlpq(Path(args.raw), pair=args.pair, n=args.n, seed=args.seed)
        elif args.command == "geoquery":
            from .geoquery import DOMAIN, build_geoquery

            items, graph, stats = build_geoquery(Path(args.raw), n=args.n, seed=args.seed)
        elif args.command == "mquake":
            from .mquake import DOMAIN, build_mquake

            items, graph, stats = build_mquake(Path(args.raw), file=args.file, n=args.n, seed=args.seed)
        else:
            from .twowiki import DOMAIN, build_twowiki

            items, graph, stats = build_twowiki(Path(args.raw), file=args.file, n=args.n, seed=args.seed,
                                                limit=args.limit)
        jsonl, graph_path = write_domain(items, graph, Path(args.out), DOMAIN)
    except MultiDomainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(stats.describe())
    print(f"wrote {len(items)} questions to {jsonl} and {len(graph)} triplets to {graph_path} "
          f"in {time.perf_counter() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
