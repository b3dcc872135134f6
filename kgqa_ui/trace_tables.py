"""Tables from traces: per-step scores (CSV download), side-by-side summaries (Compare).

Pure functions over `Trace`, so the Runs page's CSV and the Compare table are
unit-tested without Streamlit.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, Iterable

from kgqa_core.answers.chain_entities import answer_label
from kgqa_core.trace.gold import GoldGrade, grade, normalise_answer  # noqa: F401  (normalise_answer: re-exported)
from kgqa_core.trace.grounding import ground_answers
from kgqa_core.trace.schema import Candidate, Step, Trace

SCORE_COLUMNS = ["step", "kind", "title", "beam", "label", "score", "prob", "kept", "triplet_id", "head", "relation", "tail",
                 "partial"]


def is_partial(cand: Candidate) -> bool:
    """A candidate the search did not finish: its score is an upper bound (``extra.exact`` is False)."""
    return isinstance(cand.extra, dict) and cand.extra.get("exact") is False


def scores_rows(trace: Trace) -> list[dict[str, Any]]:
    """One row per candidate per step."""
    rows = []
    for step in trace.steps:
        for cand in step.candidates:
            h, r, t = (list(cand.triplet) + ["", "", ""])[:3] if cand.triplet else ("", "", "")
            rows.append({
                "step": step.index + 1, "kind": step.kind, "title": step.title, "beam": step.beam,
                "label": cand.label, "score": cand.score, "prob": cand.prob, "kept": cand.kept,
                "triplet_id": cand.triplet_id, "head": h, "relation": r, "tail": t,
                # the search did not finish this candidate: its score is an upper bound
                "partial": is_partial(cand),
            })
    return rows


def scores_csv(trace: Trace) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=SCORE_COLUMNS)
    writer.writeheader()
    for row in scores_rows(trace):
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buf.getvalue()


@dataclass
class Correctness:
    hit_at_1: bool
    matched: int
    predicted: int
    gold: int

    @property
    def label(self) -> str:
        """Words only: the badge's icon (a bundled Material Symbol) carries the mark, no emoji font needed."""
        return GoldGrade(self.hit_at_1, self.matched, self.predicted, self.gold).text

    @property
    def icon(self) -> str:
        return ":material/check_circle:" if self.hit_at_1 else (":material/error:" if self.matched else ":material/cancel:")

    @property
    def color(self) -> str:
        return "green" if self.hit_at_1 else ("orange" if self.matched else "red")


def correctness(trace: Trace, gold: Iterable[str]) -> Correctness | None:
    """Hit@1 and how many gold answers the trace found; None when there is no gold (`kgqa_core.trace.gold`)."""
    g = grade(trace.answers, gold)
    return None if g is None else Correctness(g.hit_at_1, g.matched, g.predicted, g.gold)


def trace_gold(trace: Trace, fallback: Iterable[str] = ()) -> list[str]:
    """The gold a run is graded against: its own (saved with it), else ``fallback`` (a trace older than the field)."""
    return list(trace.gold_answers) or [g for g in fallback if str(g).strip()]


@dataclass
class Badge:
    label: str
    color: str  # streamlit badge colour name
    help: str


def faithfulness_badge(trace: Trace) -> Badge:
    """A one-glance verdict on the *cited triplets* (the evidence), not on the answer: see `grounding_badge`."""
    f = trace.faithfulness
    if trace.error:
        return Badge("run failed", "red", trace.error)
    if not f.checked:
        if trace.chains:
            return Badge("chain not checked", "gray", "The trace has chains but no faithfulness report.")
        return Badge("no chain cited", "gray", "This method gave no reasoning chain to check.")
    if f.ill_triplets == 0:
        return Badge(f"cited triplets in the graph: {f.in_graph}/{f.checked}", "green",
                     "Every triplet the method cites is in the graph and connected to the topic entities or to a "
                     "triplet cited before it (DoG §2.2). This checks the evidence only: whether the answer is what "
                     "the chain reached is the next badge.")
    return Badge(f"{f.ill_triplets} ill triplet(s) of {f.checked}", "red" if f.ill_rate > 0.3 else "orange",
                 "Ill triplets are absent from the graph or not connected to what was visited before (DoG §2.2).")


def grounding_badge(trace: Trace, graph: Any | None = None) -> Badge | None:
    """Is each answer what the chain reached?  None when the run has no answer.

    Green only when every answer is where a cited chain ends.  Flagged, worst first: an
    answer that is not a graph entity (red), one no cited chain reaches (orange), one the
    chain passed through but did not end at (orange: a player named where the chain went
    on to his club), one added from the graph along the chain's relations (blue).  A
    method without a chain (Direct) is checked for graph membership only and never gets green.
    """
    rep = ground_answers(trace.answers, trace.chains, graph, trace.topic_entities)
    if not rep.total:
        return None
    details = "; ".join(f"{a.answer}: {a.explanation}" for a in rep.answers)
    missing = rep.not_in_graph
    if not rep.has_chain:
        if missing:
            return Badge(f"no chain; {len(missing)} answer(s) not a graph entity", "red",
                         "This run cites no in-graph chain, and an answer is no entity of the graph. " + details)
        return Badge(f"no chain; answers in graph: {rep.in_graph}/{rep.total}", "blue",
                     "This run cites no in-graph chain, so only graph membership can be checked. " + details)
    if rep.all_at_end:
        return Badge(f"answers where the chain ends: {rep.at_end}/{rep.total}", "green",
                     "Every answer is an entity a cited chain reached (its last hop). " + details)
    if missing:
        return Badge(f"{len(missing)} answer(s) not a graph entity", "red",
                     "An answer that is no entity of the graph cannot be supported by it. " + details)
    off = [a for a in rep.off_chain if not a.completed]
    if off:
        return Badge(f"answers off the chain: {len(off)}/{rep.total}", "orange",
                     "An answer the chain did not reach is not supported by the cited triplets. " + details)
    if rep.passed_through:
        return Badge(f"{len(rep.passed_through)} answer(s) not where the chain ends", "orange",
                     "The chain passed through this entity and went on (or started there): it is on the chain, but "
                     "not what the chain reached. " + details)
    return Badge(f"{len(rep.completed)}/{rep.total} answer(s) completed from the graph", "blue",
                 "Answers the method added along the chain's relations from the topic entity (answer completion): "
                 "in the graph, but not on the cited chain itself. " + details)


def chain_text(trace: Trace, k: int = 0) -> str:
    if k >= len(trace.chains):
        return ""
    return " \u2192 ".join(f"({c.head} \u2192 {c.relation} \u2192 {c.tail})" for c in trace.chains[k])


def summary_row(trace: Trace, gold: Iterable[str] = (), label: str | None = None) -> dict[str, Any]:
    """One Compare-table row."""
    corr = correctness(trace, gold)
    f = trace.faithfulness
    return {
        "run": label or trace.method,
        "method": trace.method,
        "model": trace.model,
        "answers": ", ".join(answer_label(a) for a in trace.answers) or ("(error)" if trace.error else "(none)"),
        "correct": corr.label if corr else "no gold",
        "hit@1": None if corr is None else corr.hit_at_1,
        "ill triplets": f"{f.ill_triplets}/{f.checked}" if f.checked else "-",
        "answers where the chain ends": _on_chain(trace),
        "model calls": trace.model_calls or sum(len(s.model_calls) for s in trace.steps),
        "forward passes": trace.forward_passes,
        "tokens in": trace.tokens_in,
        "tokens out": trace.tokens_out,
        "wall time (s)": round(trace.seconds, 2),
        "steps": len(trace.steps),
        "error": trace.error,
    }


def _on_chain(trace: Trace) -> str:
    """Answers at the end of a cited chain, of all answers (Compare's column)."""
    rep = ground_answers(trace.answers, trace.chains, None, trace.topic_entities)
    if not rep.total:
        return "-"
    return f"{rep.at_end}/{rep.total}" if rep.has_chain else "no chain"


def step_facts(step: Step) -> dict[str, Any]:
    """The numbers shown beside a step."""
    return {
        "beam": step.beam,
        "candidates": len(step.candidates),
        "kept": sum(1 for c in step.candidates if c.kept),
        "subgraph triplets": len(step.subgraph_after or step.subgraph_before),
        "new entities": len(step.added_entities),
        "model calls": len(step.model_calls),
        "tokens in/out": f"{step.tokens_in}/{step.tokens_out}",
        "seconds": round(step.seconds, 3),
    }


def trace_label(trace: Trace, run_id: str | None = None) -> str:
    q = trace.question if len(trace.question) <= 60 else trace.question[:59] + "\u2026"
    when = (trace.created_at or "")[:19].replace("T", " ")
    return f"{trace.method} · {q}" + (f" · {when}" if when else "") + (f" · {run_id}" if run_id else "")


PLANS_SHOWN = 5
# after a description the model gave an earlier run on this machine (`reading/description_store.py`)
READ_BACK = "(read back: the same model said so for the same facts in an earlier run on this machine)"


def reading_lines(trace: Trace) -> tuple[list[str], list[str]]:
    """Plain-text lines of the "Question reading" section: the reading, then the vocabulary and the model's
    descriptions of relation names (``extra["described_relations"]``) ([] when absent)."""
    reading = trace.extra.get("reading") if isinstance(trace.extra, dict) else None
    vocab = trace.extra.get("vocabulary") if isinstance(trace.extra, dict) else None
    read: list[str] = []
    if isinstance(reading, dict):
        explanation = str(reading.get("explanation") or "").strip()
        head = f"Read by {reading.get('reader', '?')}"
        conf = reading.get("confidence")
        if isinstance(conf, (int, float)) and reading.get("hops"):
            head += f": {reading.get('hops')} hop(s), {conf:.0%} sure"
            head += "" if reading.get("sure") else " (not sure enough to hold the steps to its plan)"
        read.append(head + (f". {explanation}" if explanation else ""))
        plans = reading.get("plans") if isinstance(reading.get("plans"), list) else []
        for i, p in enumerate(plans[:PLANS_SHOWN], start=1):
            if not isinstance(p, dict):
                continue
            c = p.get("confidence")
            line = f"{i}. {p.get('text', '?')}" + (f" · {c:.0%}" if isinstance(c, (int, float)) else "")
            if p.get("example"):
                line += f" · e.g. {p['example']}"
            read.append(line)
        if len(plans) > PLANS_SHOWN:
            read.append(f"... and {len(plans) - PLANS_SHOWN} more plan(s)")
    words: list[str] = []
    if isinstance(vocab, dict) and isinstance(vocab.get("entries"), dict) and vocab["entries"]:
        source = f" ({vocab['source']})" if vocab.get("source") else ""
        words.append(f"Relation vocabulary{source}:")
        for r, aliases in list(vocab["entries"].items())[:20]:
            shown = ", ".join(str(a) for a in aliases) if isinstance(aliases, list) else str(aliases)
            words.append(f"{r}: {shown}")
        if len(vocab["entries"]) > 20:
            words.append(f"... and {len(vocab['entries']) - 20} more relation(s)")
    described = trace.extra.get("described_relations") if isinstance(trace.extra, dict) else None
    if isinstance(described, dict) and isinstance(described.get("entries"), dict) and described["entries"]:
        words.append("Described by the model (relation names the sentence embedder cannot read):")
        back = described.get("from_disk") if isinstance(described.get("from_disk"), list) else []
        other = described.get("other_language") if isinstance(described.get("other_language"), dict) else {}
        for r, aliases in list(described["entries"].items())[:20]:
            shown = ", ".join(str(a) for a in aliases) if isinstance(aliases, list) else str(aliases)
            why = ""
            if isinstance(other.get(r), list) and other[r]:
                why = f" (named in another language: {', '.join(str(w) for w in other[r])})"
            words.append(f"{r}: {shown}{why}" + (f" {READ_BACK}" if r in back else ""))
        if len(described["entries"]) > 20:
            words.append(f"... and {len(described['entries']) - 20} more relation(s)")
    return read, words


def cost_rows(trace: Trace) -> list[dict[str, Any]]:
    """Where the run's time went (`Trace.costs`), one row per phase with time: words, seconds, share; [] for an older trace."""
    costs = trace.costs
    if costs is None:
        return []
    total = costs.total or 1.0
    return [{"phase": words, "seconds": round(seconds, 2), "share": f"{100 * seconds / total:.0f}%",
             "times": costs.entries.get(key, 0) if key != "other" else None}
            for key, words, seconds in costs.rows()]


def cost_counts_line(trace: Trace) -> str:
    """The breakdown's counts in one line (prompt tokens read and cached, tokens written, model calls); "" without it."""
    c = trace.costs
    if c is None:
        return ""
    forced = f" ({c.tokens_forced:,} of them forced by the graph's trie)" if c.tokens_forced else ""
    return (f"{c.prompt_tokens_read:,} prompt tokens read beyond the cached prefix, {c.prompt_tokens_cached:,} served "
            f"from the cache; {c.tokens_written:,} tokens written{forced}; {c.model_calls} model call(s); "
            f"{c.total:.1f} s in all")
