"""``python -m kgqa_core vocabulary draft``: the model's first draft of a graph's relation vocabulary.

    python -m kgqa_core vocabulary draft --graph people.tsv --out people-vocabulary.txt
    python -m kgqa_core ask --graph people.tsv --vocabulary people-vocabulary.txt --question ... --method dog

The file is the vocabulary format the readers take (``relation: word, word``), with a comment on top saying it
was drafted by the model: read it, correct it and keep it with the graph.  With ``--keep FILE`` the relations an
existing vocabulary already describes are kept as written there and not asked again.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .drafting import DraftCosts, draft_vocabulary, languages_comment, relation_facts
from .vocabulary import RelationVocabulary, VocabularyError


def add_vocabulary_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    from ..models.registry import DEFAULT_APP_MODEL

    p = subparsers.add_parser("vocabulary", help="draft a relation vocabulary for a graph with the model",
                              description="Ask the model what each relation of a graph means in plain English and "
                                          "write the answers as a vocabulary file (--vocabulary of ask and eval).")
    p.add_argument("action", choices=["draft"])
    p.add_argument("--graph", required=True, help="graph file (TSV/CSV/JSON/JSONL/N-Triples/Turtle/DoG linearised)")
    p.add_argument("--out", required=True, help="the vocabulary file to write ('-': standard output)")
    p.add_argument("--model", default=os.environ.get("KGQA_MODEL", DEFAULT_APP_MODEL),
                   help="packaged model name, local folder, .gguf file or hub id")
    p.add_argument("--backend", default=None, choices=["llama.cpp", "transformers"])
    p.add_argument("--relations", default=None,
                   help="only these relations, separated by commas (default: every relation of the graph)")
    p.add_argument("--keep", default=None, metavar="FILE",
                   help="an existing vocabulary: its relations are kept as written and not drafted again")
    p.add_argument("--languages", action=argparse.BooleanOptionalAction, default=True,
                   help="tell the model the language of a relation name judged not English ('est (French)'), as "
                        "the readers' own descriptions do (default: on; --no-languages gives every name bare)")
    p.set_defaults(func=run_vocabulary_command)
    return p


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def run_vocabulary_command(args: argparse.Namespace) -> int:
    from ..graph.loaders import GraphFormatError, load_graph

    kept = RelationVocabulary()
    if args.keep:
        try:
            kept = RelationVocabulary.read(args.keep)
        except VocabularyError as exc:
            return _fail(f"--keep {exc}")
    try:
        graph = load_graph(Path(args.graph))
    except FileNotFoundError:
        return _fail(f"--graph {args.graph}: file not found")
    except (GraphFormatError, OSError) as exc:
        return _fail(f"--graph {exc}")
    relations = sorted(graph.relations)
    if args.relations:
        asked = [r.strip() for r in args.relations.split(",") if r.strip()]
        unknown = [r for r in asked if r not in set(relations)]
        if unknown:
            return _fail(f"--relations: not relations of {args.graph}: {', '.join(unknown[:10])}")
        relations = asked
    relations = [r for r in relations if r not in kept.entries]
    from ..models import load_model

    model = load_model(args.model, backend=args.backend, progress=lambda m: print(m, file=sys.stderr))
    costs = DraftCosts()

    def shown(i: int, n: int, relation: str) -> None:
        print(f"  [{i + 1}/{n}] {relation}", file=sys.stderr)

    drafted = draft_vocabulary(model, relation_facts(iter(graph)), relations, on_relation=shown, costs=costs,
                               languages=args.languages)
    merged = RelationVocabulary({**kept.entries, **drafted.entries}, drafted.source)
    header = (f"# {drafted.source} from {Path(args.graph).name}: {len(drafted.entries)} of "
              f"{costs.relations + costs.saved} relation(s) described; check and correct before relying on it\n")
    header += languages_comment(costs.languages)
    if kept:
        header += f"# kept as written in {args.keep}: {len(kept.entries)} relation(s)\n"
    text = header + merged.to_text()
    if args.out == "-":
        sys.stdout.write(text)
    else:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as exc:
            return _fail(f"--out {args.out}: cannot be written ({exc.strerror or exc})")
    saved = f" ({costs.saved} read back from the description store)" if costs.saved else ""
    print(f"{len(drafted.entries)} relation(s) described{saved}, {len(costs.dropped)} left to their own names; "
          f"{costs.tokens_written} tokens written in {costs.seconds:.0f} s", file=sys.stderr)
    return 0
