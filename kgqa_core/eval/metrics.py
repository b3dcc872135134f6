"""Per-question metrics and their aggregation with bootstrap confidence intervals.

Answer matching (documented in docs/evaluation.md): both predicted and gold
answers go through `normalize_answer` (Unicode NFKC, case folding, punctuation
to spaces, the English articles a/an/the dropped, whitespace collapsed).  A
predicted answer counts as gold when its text, the graph entity it was
linked to *or* what the model wrote before it was mapped to the chain's entity
normalises to a gold answer.

Hits@1 is strict (READS App. C, Eq. 11): only the *first* predicted answer
counts.  The lenient miscount (any predicted answer is gold, Eq. 12) is kept as
``hits_any`` so the gap is visible, never reported as Hits@1.  F1 is macro as
in READS App. C: precision and recall are averaged over questions and F1 is
the harmonic mean of the two averages (``f1``); the mean of per-question F1
is reported as ``mean_f1`` because other papers use it.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..counts import ModelCosts
from ..trace.schema import Trace

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Canonical form for answer matching: 'The Matrix!' -> 'matrix'."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if (ch in _PUNCT or unicodedata.category(ch).startswith("P")) else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in items:
        if x and x not in seen:
            seen.add(x)
            out.append(x)
    return out


@dataclass
class AnswerScores:
    """How one question's predicted answers match its gold answers (all zero for an empty prediction)."""

    hits1: float = 0.0
    hits_any: float = 0.0
    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    exact_match: float = 0.0
    n_predicted: int = 0


def score_answers(predicted: Sequence[str | Sequence[str]], gold: Sequence[str]) -> AnswerScores:
    """Score an ordered prediction list against the gold answers.

    Each prediction is a string or a group of alternative surface forms of the
    same answer (its text and its linked entity); the group matches when any
    form does.  Duplicates (after normalisation) count once.  An empty
    prediction scores 0 everywhere.
    """
    gold_norm = set(_dedupe(normalize_answer(g) for g in gold))
    if not gold_norm:
        raise ValueError("a question needs at least one gold answer")
    groups: list[set[str]] = []
    seen: set[str] = set()
    for p in predicted:
        forms = {normalize_answer(p)} if isinstance(p, str) else {normalize_answer(x) for x in p if x}
        forms.discard("")
        if not forms or forms & seen:
            continue
        seen |= forms
        groups.append(forms)
    if not groups:
        return AnswerScores()
    correct = [bool(g & gold_norm) for g in groups]
    matched_gold = set().union(*(g & gold_norm for g in groups))
    precision = sum(correct) / len(groups)
    recall = len(matched_gold) / len(gold_norm)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    exact = float(all(correct) and matched_gold == gold_norm)
    return AnswerScores(
        hits1=float(correct[0]),
        hits_any=float(any(correct)),
        precision=precision,
        recall=recall,
        f1=f1,
        exact_match=exact,
        n_predicted=len(groups),
    )


def _triplet_key(t: Sequence[str]) -> tuple[str, str, str]:
    return (normalize_answer(t[0]), normalize_answer(t[1]), normalize_answer(t[2]))


def triplet_prf(predicted: Iterable[Sequence[str]], gold: Iterable[Sequence[str]]) -> tuple[float, float, float]:
    """Precision, recall, F1 of cited triplets against gold triplets (DoG §5.1 Triplet-F1)."""
    p = {_triplet_key(t) for t in predicted}
    g = {_triplet_key(t) for t in gold}
    if not p or not g:
        return 0.0, 0.0, 0.0
    hit = len(p & g)
    precision, recall = hit / len(p), hit / len(g)
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    return precision, recall, f1


def predicted_answer_forms(trace: Trace) -> list[list[str]]:
    """Each answer of a trace as [text, linked entity, what the model wrote] alternatives, in the method's order.

    What the model wrote differs from the text when its answer was mapped to
    the chain's entity (`Answer.mapped_from`: "German" answered as "germans").
    """
    out = []
    for a in trace.answers:
        forms = [a.text] if a.text else []
        for alt in (a.entity, a.mapped_from):
            if alt and alt not in forms:
                forms.append(alt)
        if forms:
            out.append(forms)
    return out


def cited_triplets(trace: Trace) -> list[tuple[str, str, str]]:
    """Every triplet the method cites in its chains (all chains, deduplicated)."""
    out: dict[tuple[str, str, str], None] = {}
    for chain in trace.chains:
        for ct in chain:
            out[(ct.head, ct.relation, ct.tail)] = None
    return list(out)


@dataclass
class QuestionMetrics(AnswerScores, ModelCosts):
    """Everything measured for one question and one method (a line of results.jsonl).

    Its answer scores and model costs are the fields of `AnswerScores` and
    `ModelCosts`; these are the rest.
    """

    triplet_precision: float | None = None
    triplet_recall: float | None = None
    triplet_f1: float | None = None
    cited_triplets: int = 0
    ill_triplets: int = 0
    error: bool = False
    error_class: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "QuestionMetrics":
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})


def question_metrics(
    trace: Trace,
    gold_answers: Sequence[str],
    gold_chain: Sequence[Sequence[str]] | None = None,
    wall_seconds: float | None = None,
    error_class: str | None = None,
) -> QuestionMetrics:
    """Score one trace; a trace with an error scores as an empty answer."""
    s = score_answers(predicted_answer_forms(trace), gold_answers)
    tp = tr = tf = None
    cited = cited_triplets(trace)
    if gold_chain:
        tp, tr, tf = triplet_prf(cited, gold_chain)
    faith = trace.faithfulness
    return QuestionMetrics(
        **asdict(s),
        triplet_precision=tp,
        triplet_recall=tr,
        triplet_f1=tf,
        cited_triplets=faith.checked,
        ill_triplets=faith.ill_triplets,
        model_calls=trace.model_calls,
        tokens_in=trace.tokens_in,
        tokens_out=trace.tokens_out,
        forward_passes=trace.forward_passes,
        seconds=float(wall_seconds if wall_seconds is not None else trace.seconds),
        error=bool(trace.error),
        error_class=error_class,
    )


# ----------------------------------------------------------------- aggregation
@dataclass
class Estimate:
    """A statistic with its 95% bootstrap percentile interval."""

    value: float
    low: float
    high: float
    n: int

    def fmt(self, digits: int = 3) -> str:
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def bootstrap(
    values: dict[str, np.ndarray],
    statistic: Callable[[dict[str, np.ndarray]], float],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Estimate | None:
    """Percentile bootstrap over questions (rows resampled jointly across columns).

    Resampling questions, not individual numbers, keeps ratio statistics such
    as macro-F1 and the ill-triplet rate consistent inside each resample.
    """
    n = len(next(iter(values.values()))) if values else 0
    if n == 0:
        return None
    point = float(statistic(values))
    if n == 1:
        return Estimate(point, point, point, 1)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    stats = np.array([statistic({k: v[row] for k, v in values.items()}) for row in idx], dtype=float)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(stats, [alpha, 1 - alpha])
    return Estimate(point, float(low), float(high), n)


def _mean(key: str) -> Callable[[dict[str, np.ndarray]], float]:
    return lambda v: float(v[key].mean())


def _macro_f1(v: dict[str, np.ndarray]) -> float:
    p, r = v["precision"].mean(), v["recall"].mean()
    return float(2 * p * r / (p + r)) if p + r else 0.0


def _ill_rate(v: dict[str, np.ndarray]) -> float:
    cited = v["cited_triplets"].sum()
    return float(v["ill_triplets"].sum() / cited) if cited else 0.0


# Each answer-quality estimate of a `GroupSummary` and the statistic it bootstraps over the questions' columns.
_ANSWER_ESTIMATES: dict[str, Callable[[dict[str, np.ndarray]], float]] = {
    "hits1": _mean("hits1"),
    "hits_any": _mean("hits_any"),
    "precision": _mean("precision"),
    "recall": _mean("recall"),
    "f1": _macro_f1,
    "mean_f1": _mean("f1"),
    "exact_match": _mean("exact_match"),
}
# The per-question numbers `summarize` reads as columns.
_COLUMNS = ("hits1", "hits_any", "precision", "recall", "f1", "exact_match",
            "cited_triplets", "ill_triplets", "model_calls", "tokens_in", "tokens_out", "seconds")

ERROR_CLASSES = ("C1", "C2", "E1", "E2", "E3")


@dataclass
class GroupSummary:
    """Aggregated metrics of one method (optionally restricted to one question type)."""

    method: str
    type: str = "all"
    n: int = 0
    errors: int = 0
    hits1: Estimate | None = None
    hits_any: Estimate | None = None
    precision: Estimate | None = None
    recall: Estimate | None = None
    f1: Estimate | None = None
    mean_f1: Estimate | None = None
    exact_match: Estimate | None = None
    triplet_f1: Estimate | None = None
    ill_triplet_rate: Estimate | None = None
    ill_triplets: int = 0
    cited_triplets: int = 0
    error_classes: dict[str, int] = field(default_factory=dict)
    model_calls_mean: float = 0.0
    tokens_in_per_request: float = 0.0
    tokens_out_per_request: float = 0.0
    tokens_in_mean: float = 0.0
    tokens_out_mean: float = 0.0
    seconds_mean: float = 0.0
    seconds_p50: float = 0.0
    seconds_p95: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(
    method: str,
    metrics: Sequence[QuestionMetrics],
    qtype: str = "all",
    n_boot: int = 1000,
    seed: int = 0,
) -> GroupSummary:
    """Aggregate per-question metrics of one method into estimates with 95% CIs."""
    out = GroupSummary(method=method, type=qtype, n=len(metrics))
    if not metrics:
        return out
    cols = {name: np.array([float(getattr(m, name)) for m in metrics]) for name in _COLUMNS}
    b = lambda stat, vals=cols: bootstrap(vals, stat, n_boot=n_boot, seed=seed)  # noqa: E731
    out.errors = sum(m.error for m in metrics)
    for name, statistic in _ANSWER_ESTIMATES.items():
        setattr(out, name, b(statistic))
    with_chain = [m.triplet_f1 for m in metrics if m.triplet_f1 is not None]
    if with_chain:
        out.triplet_f1 = b(_mean("t"), {"t": np.array(with_chain, dtype=float)})
    out.cited_triplets = int(cols["cited_triplets"].sum())
    out.ill_triplets = int(cols["ill_triplets"].sum())
    if out.cited_triplets:
        out.ill_triplet_rate = b(_ill_rate)
    classes = [m.error_class for m in metrics if m.error_class]
    if classes:
        out.error_classes = {c: classes.count(c) for c in ERROR_CLASSES}
    calls = cols["model_calls"].sum()
    out.model_calls_mean = float(cols["model_calls"].mean())
    out.tokens_in_mean = float(cols["tokens_in"].mean())
    out.tokens_out_mean = float(cols["tokens_out"].mean())
    out.tokens_in_per_request = float(cols["tokens_in"].sum() / calls) if calls else 0.0
    out.tokens_out_per_request = float(cols["tokens_out"].sum() / calls) if calls else 0.0
    out.seconds_mean = float(cols["seconds"].mean())
    out.seconds_p50 = float(np.percentile(cols["seconds"], 50))
    out.seconds_p95 = float(np.percentile(cols["seconds"], 95))
    return out


def format_table(groups: Sequence[GroupSummary], markdown: bool = False) -> str:
    """A table of the headline metrics, one row per group: aligned text, or Markdown for docs."""
    headers = ["method", "type", "n", "Hits@1 [95% CI]", "F1", "EM", "TripF1", "ill%", "calls", "tok in/req", "p50 s", "p95 s", "err"]
    rows = []
    for g in groups:
        f = lambda e: f"{e.value:.3f}" if e is not None else "-"  # noqa: E731
        rows.append([
            g.method, g.type, str(g.n),
            g.hits1.fmt() if g.hits1 else "-",
            f(g.f1), f(g.exact_match), f(g.triplet_f1),
            f"{100 * g.ill_triplet_rate.value:.1f}" if g.ill_triplet_rate else "-",
            f"{g.model_calls_mean:.1f}", f"{g.tokens_in_per_request:.0f}",
            f"{g.seconds_p50:.1f}", f"{g.seconds_p95:.1f}", str(g.errors),
        ])
    if markdown:
        md = lambda cells: "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"  # noqa: E731
        return "\n".join([md(headers), "|" + "---|" * len(headers), *(md(r) for r in rows)])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])
