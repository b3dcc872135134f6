"""How well each question reader reads questions of several domains: hops, and whether its plan reaches the answer.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/reading.py --readers wording,lexicon,paths \\
        --model qwen2.5-coder-1.5b --per-type 10 datasets/multidomain/*.jsonl datasets/metaqa_full_kb/*.jsonl

For every question (the first --per-type of each type in each dataset), each
reader reads it against the question's whole graph.  Printed per dataset,
type and reader: n, hops exact (the reading's hop count equals the type's
"Nhop"), plan reaches gold (walking the best plan from the topic entity
reaches a gold answer: the reading found a path that answers), sure (share
of readings at least --sure-at), sure and right (of the sure ones, how many
reach gold: what a hard filter would cost), seconds per reading and the tokens
the model read per reading, its prompts' and the options' (each reading starts
from an empty prefix cache; ``--warm``: from the prompts read before, as in a
session, where the prompts' fixed text is read once).  No
reader was written from these datasets' questions except ``wording``
(MetaQA's templates).  ``--phrases-only``: only the questions with two
side-by-side words the alignment joins into one (`alignment.join_phrases`,
against the relations of the walks from the topic entities): the questions
``paths:phrase_gain=0`` can read differently.  ``--pieces-only``: only the
questions whose alignment the pieces for words apart (`alignment.APART_AT`)
and answer words (`alignment.ANSWER_WORDS`) change; ``--without-pieces``
reads without them (the reader before them), for an A/B in two processes; ``--listed-only``: the readers after
the first read only the questions the first listed walks for (its quick look unsure), for readers that differ only
in the listed choice (`paths:blend=W`); ``--when-first-says TEXT``: the same for the questions whose first
reading's explanation says TEXT (a variant first); ``--with-answer-noun``: only the questions that ask for their
answer with a noun ("which country"); ``--alignment NAME=VALUE`` sets
any `alignment` setting for the run, and ``--changed-only NAME=VALUE`` reads only the questions whose alignment
that setting changes.  A question naming several
entities reaches gold when the reading's walks from them (each entity's first) reach a gold answer together.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.reading import alignment  # noqa: E402
from kgqa_core.reading.readers import make_reader  # noqa: E402


def walk_plan(graph, plan, limit: int = 5000) -> set[str]:
    """The entities the plan's relation path reaches from its topic entity, walked as the readers walk
    (`reading.paths.plan_ends`) but through every neighbour and from up to `limit` entities a hop."""
    from kgqa_core.reading.paths import plan_ends

    return set(plan_ends(graph, plan, cap=sys.maxsize, fan=limit)) - {plan.topic}


def joins_phrases(q, graph) -> list[str]:
    """The phrases the hop alignment joins in the question (against its walks' relations); [] when none."""
    from kgqa_core.graph.embeddings import load_embedder
    from kgqa_core.reading.alignment import _similarities
    from kgqa_core.reading.paths import relation_paths

    relations = sorted({h.relation for p in relation_paths(graph, q.topic_entities) for h in p.hops})
    words, _ = _similarities(q.question, q.topic_entities, relations, None, load_embedder())  # as the reader does
    return [w for w in words if " " in w]


# The alignment without its pieces for words apart and answer words (`alignment.APART_AT`, `ANSWER_WORDS`)
WITHOUT_PIECES = {"APART_AT": 9.0, "ANSWER_WORDS": ()}
WITH_PIECES = {k: getattr(alignment, k) for k in WITHOUT_PIECES}


def _set_alignment(settings: dict) -> dict:
    """Set `alignment` module settings; returns the old values (to set back)."""
    saved = {k: getattr(alignment, k) for k in settings}
    for k, v in settings.items():
        setattr(alignment, k, v)
    return saved


def _settings(items: list[str]) -> dict:
    """``NAME=VALUE`` items as `alignment` settings, each value read as the setting's own type."""
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        if not hasattr(alignment, name):
            raise SystemExit(f"--alignment/--changed-only: alignment has no setting {name!r}")
        kind = type(getattr(alignment, name))
        out[name] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
    return out


def pieces_change(q, graph, against: dict | None = None) -> bool:
    """Whether the pieces for words apart and answer words (or the settings `against`) change any walk's alignment
    in the question."""
    from kgqa_core.graph.embeddings import load_embedder
    from kgqa_core.reading.alignment import COVER_WEIGHT, joint_alignment
    from kgqa_core.reading.paths import relation_paths

    plans = relation_paths(graph, q.topic_entities)
    if not plans:
        return False
    combos = [[p] for p in plans]
    scores = []
    pair = (WITH_PIECES, WITHOUT_PIECES) if against is None else ({}, against)
    for settings in pair:  # whichever the run reads with
        saved = _set_alignment(settings)
        try:
            scores.append(joint_alignment(q.question, q.topic_entities, combos, embedder=load_embedder(),
                                          cover=COVER_WEIGHT))
        finally:
            _set_alignment(saved)
    now, then = scores
    return now is not None and then is not None and any(abs(a - b) > 1e-6 for a, b in zip(now, then))


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--readers", default="wording,lexicon,paths")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--backend", default=None)
    ap.add_argument("--per-type", type=int, default=10)
    ap.add_argument("--sure-at", type=float, default=0.5)
    ap.add_argument("--show", action="store_true", help="print each question's readings")
    ap.add_argument("--phrases-only", action="store_true",
                    help="only questions in which the hop alignment joins two words into one phrase")
    ap.add_argument("--pieces-only", action="store_true",
                    help="only questions in which the pieces for words apart and answer words change an alignment")
    ap.add_argument("--without-pieces", action="store_true",
                    help="read without those pieces (APART_AT and ANSWER_WORDS off): the reader before them")
    ap.add_argument("--alignment", action="append", default=[], metavar="NAME=VALUE",
                    help="set an `alignment` module setting for this run (COPULAR_NOUNS=1): an A/B in two processes")
    ap.add_argument("--changed-only", action="append", default=[], metavar="NAME=VALUE",
                    help="only questions whose alignment this setting changes (against the run's own settings)")
    ap.add_argument("--look-changed-only", type=int, default=0, metavar="N",
                    help="only questions to whose offered walks the model's relation look with N places "
                         "(`paths:look=N`) adds a walk: where it adds none, a reader with look=N "
                         "reads as the one without it")
    ap.add_argument("--listed-only", action="store_true",
                    help="the other readers read only the questions the first reader listed walks for (its quick "
                         "look under `reading_quick_at`): for readers that differ only in the listed choice "
                         "(`paths:blend=W`), which read the rest exactly as the first")
    ap.add_argument("--when-first-says", default="", metavar="TEXT",
                    help="the other readers read only the questions whose reading by the first reader says TEXT in "
                         "its explanation (a variant first, \"`reading_kind_look`\": the questions it acted on)")
    ap.add_argument("--with-answer-noun", action="store_true",
                    help="only questions that ask for their answer with a noun (\"which country\", "
                         "`alignment.answer_nouns`): those `paths:kind_look=W` can change")
    ap.add_argument("--ids-out", type=Path, default=None,
                    help="write the ids of the questions read, one a line (to ask only those, e.g. with DoG)")
    ap.add_argument("--warm", action="store_true",
                    help="keep the prompts read before in the prefix cache, as a session does (one reader per run: "
                         "otherwise one reader's listing serves another's)")
    args = ap.parse_args(argv)
    # readers are separated by ";" when a variant sets several options ("paths;paths:permutations=1,max_options=8")
    names = [r for r in args.readers.split(";" if ";" in args.readers else ",") if r]
    model = None
    if any(n.startswith("paths") for n in names):
        from kgqa_core.models import load_model

        model = load_model(args.model, backend=args.backend)
    readers = {n: make_reader(n, model) for n in names}
    if args.without_pieces:
        _set_alignment(WITHOUT_PIECES)
    _set_alignment(_settings(args.alignment))
    changed = _settings(args.changed_only)
    looker = None
    if args.look_changed_only:
        from kgqa_core.reading.readers import ModelPathReader

        looker = make_reader(f"paths:look={args.look_changed_only}", model)
        assert isinstance(looker, ModelPathReader)
    seen = kept = 0
    read_ids: list[str] = []
    rows: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for path in args.datasets:
        ds = load_dataset(path)
        taken: dict[str, int] = defaultdict(int)
        for q in ds:
            if taken[q.type] >= args.per_type:
                continue
            taken[q.type] += 1
            graph = q.graph()
            if args.phrases_only and not joins_phrases(q, graph):
                continue
            if args.pieces_only and not pieces_change(q, graph):
                continue
            if changed and not pieces_change(q, graph, changed):
                continue
            if args.with_answer_noun and not alignment.kind_nouns(q.question, q.topic_entities):
                continue
            seen += 1
            if looker is not None and not looker.offer(q.question, graph, q.topic_entities).looked:
                continue
            kept += 1
            read_ids.append(q.id)
            gold = {_norm(a) for a in q.answers}
            want = int(q.type[0]) if q.type[:1].isdigit() else 0
            for k, (n, reader) in enumerate(readers.items()):
                if model is not None and not args.warm:  # cold: one reader's listing must not serve another's
                    model.clear_prefix_cache()
                t0 = time.perf_counter()
                before = model.counter.snapshot()[1] if model is not None else 0
                r = reader.read(q.question, graph, q.topic_entities)
                secs = time.perf_counter() - t0
                if not k:  # counted: the first reader listed the walks (its list's calls are "reads.reading order")
                    counted = any(getattr(c, "purpose", "").startswith("reads.reading order") for c in r.calls)
                    if args.when_first_says:
                        counted = args.when_first_says in r.explanation
                    if (args.listed_only or args.when_first_says) and not counted:
                        read_ids.pop()
                read = (model.counter.snapshot()[1] - before) if model is not None else 0
                reaches = bool(r.plans) and bool(gold & {_norm(e) for e in walk_plan(graph, r.plans[0])})
                first = {}  # a question naming several entities: each one's walk of the reading, met where they meet
                for p in r.plans:
                    first.setdefault(p.topic, p)
                if len(first) > 1:
                    met = set.intersection(*(walk_plan(graph, p) for p in first.values()))
                    reaches = bool(gold & {_norm(e) for e in met})
                if n.startswith("wording"):  # no plan: its named relations walked in its order
                    reaches = False
                sure = r.guides(args.sure_at)
                if (args.listed_only or args.when_first_says) and not counted:  # read alike by all: not counted
                    break
                rows[(ds.name, q.type, n)].append(
                    {"hops": r.hops == want, "reach": reaches, "sure": sure, "s": secs, "tokens": read})
                if args.show:
                    print(f"[{ds.name} {q.type} {n}] {q.question!r} -> {r.explanation} | reaches gold: {reaches}",
                          flush=True)
    if args.ids_out is not None:
        args.ids_out.write_text("".join(i + "\n" for i in read_ids), encoding="utf-8")
    if args.listed_only:
        print("only the questions the first reader listed walks for are counted")
    if args.when_first_says:
        print(f"only the questions whose first reading says {args.when_first_says!r} are counted")
    if looker is not None:
        print(f"the relation look added walks to the offer of {kept} of {seen} questions; only those were read")
    print("| dataset | type | reader | n | hops exact | plan reaches gold | sure | sure and reaches | s/reading | tokens read |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (dname, qtype, n), rs in sorted(rows.items()):
        k = len(rs)
        sure = [r for r in rs if r["sure"]]
        sr = f"{sum(r['reach'] for r in sure)}/{len(sure)}" if n != "wording" else "-"
        reach = f"{sum(r['reach'] for r in rs) / k:.2f}" if n != "wording" else "-"
        print(f"| {dname} | {qtype} | {n} | {k} | {sum(r['hops'] for r in rs) / k:.2f} | {reach} | "
              f"{len(sure) / k:.2f} | {sr} | {statistics.median(r['s'] for r in rs):.2f} | {statistics.median(r['tokens'] for r in rs):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
