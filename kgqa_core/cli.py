"""The command line: every method and the evaluation without the UI.

    python -m kgqa_core ask (--graph FILE | --sparql URL [--dialect rdf|freebase|wikidata])
                            --question TEXT [--topic E ...] --method NAME
                            [--model NAME_OR_PATH] [--beam-size K] [--preset paper|workbench]
                            [--vocabulary FILE] [--trace-out F.json] [--json]
    python -m kgqa_core models [list | install NAME [--force]]
    python -m kgqa_core methods
    python -m kgqa_core eval --dataset F.jsonl --methods dog,cot --out DIR [--preset paper] [--vocabulary FILE] ...
    python -m kgqa_core generate --graph FILE --patterns 2p,2i --n 20 --out q.jsonl
    python -m kgqa_core show TRACE.json

Errors exit non-zero with a one-line message, never a traceback, unless --debug.
Everything printed goes through `kgqa_core.terminal`: answers, chains, names
and errors come from graphs, models and servers, and their control characters
(an escape sequence retitling the terminal or writing its clipboard) are
printed as escapes, never obeyed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from .terminal import one_line

EXIT_USAGE = 2
EXIT_ERROR = 1


class CliError(Exception):
    """An error the user can fix; printed as one line."""


# -------------------------------------------------------------------- ask
def cmd_ask(args: argparse.Namespace) -> int:
    from .graph import GraphFormatError, link_entities, load_graph
    from .methods.base import METHODS, MethodRequest, method_spec, run_method
    from .models import load_model
    from .parameters import ParameterError, parse_params
    from .trace.schema import save_trace

    from .questions import QuestionError, check_question, parse_gold

    if args.method not in METHODS:
        raise CliError(f"unknown method {args.method!r}; choose one of: {', '.join(METHODS)}")
    params = _ask_params(args)
    try:  # refused before the graph and the model load
        parse_params(method_spec(args.method), params)
    except ParameterError as exc:
        raise CliError(f"{exc} (see: python -m kgqa_core methods)") from None
    try:
        args.question = check_question(args.question)
    except QuestionError as exc:
        raise CliError(f"{exc} (--question)") from None
    vocabulary = read_vocabulary(args.vocabulary)  # refused, naming the file and line, before anything loads
    store = _open_store(args)
    if store is not None:
        graph = store
    else:
        try:
            graph = load_graph(args.graph)
        except GraphFormatError as exc:
            raise CliError(str(exc)) from None
        except FileNotFoundError:
            raise CliError(f"graph file not found: {args.graph}") from None

    topics = list(args.topic or [])
    if store is not None:
        topics = _store_topics(store, args, topics)
    elif topics:
        unknown = [t for t in topics if not graph.has_entity(t)]
        if unknown:
            hints = graph.search_entities(unknown[0], limit=3)
            hint = f" (did you mean {', '.join(repr(h) for h, _ in hints)}?)" if hints else ""
            raise CliError(f"topic entity {unknown[0]!r} is not in the graph{hint}")
    else:
        cands = link_entities(args.question, graph)
        if not cands:
            raise CliError("no graph entity found in the question; name one with --topic ENTITY")
        best = cands[0].score
        topics = [c.entity for c in cands if c.score >= best - 1e-9][:3]
        if not args.json:
            print(f"topic entities (linked): {', '.join(one_line(t) for t in topics)}", file=sys.stderr)
    warn_unknown_relations(vocabulary, graph)

    progress = None if args.json else (lambda msg: print(msg, file=sys.stderr))
    from .models.server_model import server_from_args

    model = server_from_args(args, progress) or load_model(args.model, device=args.device, progress=progress,
                                                            backend=args.backend)
    if model.load_note and args.json:
        print(f"note: {model.load_note}", file=sys.stderr)

    def on_step(step) -> None:
        if args.verbose and not args.json:
            print(f"  [{step.index}] {one_line(step.kind)}: {one_line(step.title or step.choice or '')}", file=sys.stderr)

    request = MethodRequest(graph=graph, question=args.question, model=model,
                            topic_entities=topics, params=params, seed=args.seed, on_step=on_step,
                            vocabulary=vocabulary)
    from . import progress
    from .rates import RateListener, graph_size, shared_book

    book, backend = shared_book(), str(getattr(model, "backend", "") or "")
    measure = RateListener(book, model.name, backend)  # this machine's rates: the app's ETAs learn from CLI runs too
    with progress.listening(measure):
        trace = run_method(args.method, request)
    if not (trace.error or trace.stopped):
        book.observe_run(model.name, backend, args.method, trace.parameters, graph_size(graph),
                         measure.typical(trace.seconds), measure.first_prompt)
    book.flush()
    trace.gold_answers = parse_gold(args.gold)  # saved with the run: `show` and the app grade it later
    if args.trace_out:
        save_trace(trace, args.trace_out)
    if args.json:
        print(trace.to_json())
    else:
        _print_trace_summary(trace)
    return EXIT_ERROR if trace.error and not trace.answers else 0


def _open_store(args: argparse.Namespace):
    """The SPARQL store named by ``--sparql`` (exactly one of --graph / --sparql), or None."""
    from .graph.sparql.options import source_from_args

    if bool(getattr(args, "sparql", None)) == bool(args.graph):
        raise CliError("name the graph with exactly one of --graph FILE or --sparql URL")
    try:
        source = source_from_args(args)
        return source.open() if source is not None else None
    except ValueError as exc:  # SparqlError is a RuntimeError; bad settings are ValueErrors
        raise CliError(str(exc)) from None
    except RuntimeError as exc:
        raise CliError(str(exc)) from None


def _store_topics(store, args: argparse.Namespace, topics: list[str]) -> list[str]:
    """Topic entities checked in (or linked from the question by label in) a SPARQL store."""
    from .graph.sparql import SparqlError
    from .graph.store_linking import link_in_store

    try:
        if topics:
            named = store.lookup_names(topics)
            unknown = [t for t in topics if t not in named]
            if unknown:
                hints = store.search_entities(unknown[0], limit=3)
                hint = f" (did you mean {', '.join(repr(h) for h, _ in hints)}?)" if hints else ""
                raise CliError(f"topic entity {unknown[0]!r} is not in the store{hint}")
            return [named[t] for t in topics]
        cands = link_in_store(args.question, store)
    except SparqlError as exc:
        raise CliError(str(exc)) from None
    if not cands:
        raise CliError("no entity of the question matches a label in the store; name one with --topic ENTITY")
    if not args.json:
        print(f"topic entity (linked in the store): {one_line(cands[0].entity)}", file=sys.stderr)
    return [cands[0].entity]


def _ask_params(args: argparse.Namespace) -> dict:
    """``--param`` pairs plus the shortcut flags (``--preset``, ``--beam-size``...), as raw values for `parse_params`."""
    from .parameters import ParameterError, parse_pairs, preset_flag

    try:
        params = preset_flag(parse_pairs(args.param), args.preset)
    except ParameterError as exc:
        raise CliError(str(exc)) from None
    for name in ("beam_size", "max_steps", "hops"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    return params


def read_vocabulary(path: str | None):
    """The relation vocabulary of ``--vocabulary FILE`` (None without one); a bad file is one line naming it and the line."""
    if not path:
        return None
    from .reading.vocabulary import RelationVocabulary, VocabularyError

    try:
        return RelationVocabulary.read(path)
    except VocabularyError as exc:
        raise CliError(f"--vocabulary {exc}") from None


def warn_unknown_relations(vocabulary, graph) -> None:
    """One warning line on stderr listing the vocabulary's relations the graph does not hold."""
    unknown = vocabulary.unknown(graph) if vocabulary else []
    if unknown:
        shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        print(f"warning: {one_line(vocabulary.source)}: relations not in the graph (their words match nothing): "
              f"{one_line(shown)}",
              file=sys.stderr)


def _print_trace_summary(trace) -> None:
    """The answer, the chain, the costs and the error: each field from the trace printed as one line."""
    from .answers.chain_entities import answer_label

    answers = ", ".join(one_line(answer_label(a)) for a in trace.answers) or "(no answer)"
    print(f"answer: {answers}")
    _print_setup(trace)
    if trace.best_chain:
        print("chain:")
        for ct in trace.best_chain:
            mark = "ok" if ct.grounded else f"ILL: {one_line(ct.reason)}"
            print(f"  < {one_line(ct.head)} -> {one_line(ct.relation)} -> {one_line(ct.tail)} >  [{mark}]")
    f = trace.faithfulness
    if trace.graph_queries:
        print(f"graph store: {trace.graph_queries} queries, {trace.graph_seconds:.2f}s")
    print(
        f"faithfulness: {f.checked - f.ill_triplets}/{f.checked} cited triplets grounded; "
        f"{trace.model_calls} model calls, {trace.forward_passes} forward passes, "
        f"{trace.tokens_in} tokens in / {trace.tokens_out} out, {trace.seconds:.1f}s"
    )
    _print_costs(trace)
    if trace.gold_answers:
        print(f"gold: {_gold_verdict(trace)}")
    if trace.error:
        print(f"error: {one_line(trace.error)}")


def _print_costs(trace) -> None:
    """Where the run's time went (`Trace.costs`): one line per phase with time, then the token counts."""
    c = trace.costs
    if c is None:
        print("time by phase: not recorded (an older trace)")
        return
    total = c.total or 1.0
    print(f"time by phase ({c.total:.1f}s):")
    for key, words, seconds in c.rows():
        times = f", {c.entries[key]}x" if key in c.entries and key != "other" else ""
        print(f"  {seconds:7.2f}s {100 * seconds / total:3.0f}%  {one_line(words)}{times}")
    print(f"  tokens: {c.prompt_tokens_read} prompt tokens read beyond the cached prefix, {c.prompt_tokens_cached} "
          f"from the cache, {c.tokens_written} written{_forced_words(c)}; {c.model_calls} model calls")


def _forced_words(c) -> str:
    """' (12 of them forced by the graph's trie)' when the trie wrote some of the tokens, else ''."""
    return f" ({c.tokens_forced} of them forced by the graph's trie)" if c.tokens_forced else ""


def _print_setup(trace) -> None:
    """The preset, the user's vocabulary and the question's reading, as the trace recorded them."""
    preset = trace.parameters.get("preset") if isinstance(trace.parameters, dict) else None
    print(f"preset: {one_line(str(preset))}" if preset else "preset: not recorded (an older trace: it ran the workbench's defaults)")
    vocab = trace.extra.get("vocabulary")
    if isinstance(vocab, dict) and isinstance(vocab.get("entries"), dict):
        source = f" from {one_line(str(vocab['source']))}" if vocab.get("source") else ""
        print(f"vocabulary: {len(vocab['entries'])} relation(s){source}")
    reading = trace.extra.get("reading")
    if isinstance(reading, dict) and reading.get("explanation"):
        print(f"question reading ({one_line(str(reading.get('reader', '?')))}): {one_line(str(reading['explanation']))}")
    from .answers.meeting import NOTE_HEAD
    from .answers.plan_lead import NOTE_HEAD as PLAN_HEAD

    for head in ("prompt budget:", "meeting_context:", "past_horizon:", "conclude_at_depth:", NOTE_HEAD, PLAN_HEAD):
        # how many graph triplets the prompt showed, and why (DoG's smaller prompt for a sure reading); a reading
        # that saw no further than its hops, so they do not decide which answers lead (DoG's past_horizon); a chain
        # that answered where its path completed the reading (conclude_at_depth); the triplets where a two-entity
        # reading's walks meet, shown first (meeting_context); the
        # answers that meet more of the question's entities, which lead (meet_topics); the reading's likeliest
        # plan's ends, put before the model's answer (plan_leads_answers)
        note = next((n for n in trace.notes if isinstance(n, str) and n.startswith(head)), None)
        if note:
            print(one_line(note))


def _gold_verdict(trace) -> str:
    """How the answers compare with the gold saved in the trace: the app's verdict, in the same words."""
    from .trace.gold import grade

    g = grade(trace.answers, trace.gold_answers)
    return f"{g.text} ({' | '.join(trace.gold_answers)})" if g is not None else "none given"


# ----------------------------------------------------------------- models
def cmd_models(args: argparse.Namespace) -> int:
    from .models import install_model, model_statuses

    action = args.action or "list"
    if action == "list":
        for st in model_statuses():
            state = "installed" if st.installed else f"not installed ({len(st.missing)} package(s) missing)"
            cache = ", converted copy cached" if st.converted_cache else ""
            print(f"{st.name:22s} {state}{cache}\n{'':22s} {st.title}: {st.description}")
        print("\nAlso accepted by --model: a local Hugging Face folder, a .gguf file, or a hub id (owner/name).")
        return 0
    if action == "install":
        if not args.name:
            raise CliError("models install needs a model name")
        install_model(args.name, force=args.force, progress=print)
        print(f"{args.name}: installed")
        return 0
    raise CliError(f"unknown models action {action!r}; use list or install")


def cmd_methods(args: argparse.Namespace) -> int:
    """Each method with its summary and its declared parameters (type, default, range, help)."""
    from .methods.base import METHODS, method_spec
    from .parameters import declared

    for name in METHODS:
        try:
            spec = method_spec(name)
        except ImportError as exc:
            print(f"{name}  (not available: {exc})\n")
            continue
        print(f"{name}  {spec.summary}")
        for info in declared(spec.params):
            print(f"  {info.name} = {info.describe_default()}  ({info.allowed()})\n      {info.help}")
        print()
    print("Set one with --param NAME=VALUE (ask and eval).")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from .trace.schema import TraceFormatError, load_trace

    try:
        trace = load_trace(args.trace)
    except (TraceFormatError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from None
    print(f"{one_line(trace.method)} on {one_line(repr(trace.question))} ({one_line(trace.model)}, "
          f"{len(trace.steps)} steps)")
    _print_trace_summary(trace)
    return 0


# ------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    from .models.registry import TEST_MODEL

    parser = argparse.ArgumentParser(prog="python -m kgqa_core", description="Explainable KGQA workbench (command line)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="answer one question with one method")
    ask.add_argument("--graph", help="graph file (TSV/CSV/JSON/JSONL/N-Triples/Turtle/DoG linearised)")
    ask.add_argument("--question", required=True)
    ask.add_argument("--topic", action="append", help="topic entity (repeatable); default: linked from the question")
    ask.add_argument("--method", required=True)
    ask.add_argument("--model", default=os.environ.get("KGQA_MODEL", TEST_MODEL),
                     help="packaged model name, local folder, .gguf file or hub id")
    ask.add_argument("--device", default=None, help="cpu, cuda or mps (default: best available)")
    ask.add_argument("--backend", default=None, choices=["llama.cpp", "transformers"],
                     help="model backend (default: $KGQA_BACKEND, else llama.cpp on a CPU-only machine when installed)")
    from .models.server_model import add_server_arguments

    add_server_arguments(ask)
    ask.add_argument("--beam-size", default=None, help="same as --param beam_size=K (DoG)")
    ask.add_argument("--max-steps", default=None, help="same as --param max_steps=N (DoG)")
    ask.add_argument("--hops", default=None, help="same as --param hops=N (RoK)")
    ask.add_argument("--param", action="append",
                     help="method parameter NAME=VALUE (repeatable); `methods` lists each method's")
    add_preset_arguments(ask)
    ask.add_argument("--seed", type=int, default=0)
    ask.add_argument("--gold", default="", help="the expected answer(s), separated by | (saved in the trace; "
                     "the summary says how many were found)")
    ask.add_argument("--trace-out", help="save the trace as JSON")
    ask.add_argument("--json", action="store_true", help="print the whole trace as JSON")
    ask.add_argument("-v", "--verbose", action="store_true", help="print each step as it completes")
    from .graph.sparql.options import add_sparql_arguments

    add_sparql_arguments(ask)
    ask.set_defaults(func=cmd_ask)

    models = sub.add_parser("models", help="list or install packaged models")
    models.add_argument("action", nargs="?", choices=["list", "install"])
    models.add_argument("name", nargs="?")
    models.add_argument("--force", action="store_true", help="reinstall even if present")
    models.set_defaults(func=cmd_models)

    methods = sub.add_parser("methods", help="list the reasoning methods and their parameters")
    methods.set_defaults(func=cmd_methods)

    show = sub.add_parser("show", help="summarise a saved trace")
    show.add_argument("trace")
    show.set_defaults(func=cmd_show)

    _optional_subcommand(sub, "kgqa_core.eval.cli", "add_eval_parser", "run_eval_command")
    _optional_subcommand(sub, "kgqa_core.lpkg.cli", "add_generate_parser", "run_generate_command")
    _optional_subcommand(sub, "kgqa_core.reading.draft_cli", "add_vocabulary_parser", "run_vocabulary_command")
    return parser


def add_preset_arguments(parser: argparse.ArgumentParser) -> None:
    """``--preset`` and ``--vocabulary`` (``ask``; ``eval`` declares the same two)."""
    parser.add_argument("--preset", default=None, choices=["workbench", "paper"],
                        help="paper: every method as published, without the workbench's guidance; workbench: the "
                             "workbench's defaults (the default). Same as --param preset=NAME; a parameter you set wins")
    parser.add_argument("--vocabulary", default=None, metavar="FILE",
                        help="your words for the graph's relations, one relation a line: 'relation: word, word' "
                             "(# starts a comment); the question readers use them, the trace records them")


def _optional_subcommand(sub, module: str, adder: str, runner: str) -> None:
    """Subcommands whose parsers live with their feature (evaluation, LPKG generation)."""
    import importlib

    try:
        mod = importlib.import_module(module)
    except ImportError:
        return
    fn: Callable | None = getattr(mod, adder, None)
    if fn is None:
        return
    parser = fn(sub)
    run = getattr(mod, runner, None)
    if parser is not None and run is not None and parser.get_default("func") is None:
        parser.set_defaults(func=run)


def main(argv: Sequence[str] | None = None) -> int:
    from .terminal import safe_output

    with safe_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except SystemExit as exc:  # argparse usage errors and --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line for users; the traceback with --debug
        if debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"error: {one_line(message)}", file=sys.stderr)
        return EXIT_ERROR
