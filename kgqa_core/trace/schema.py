"""The trace: the contract between the reasoning core and the UI.

A trace records every step a method took, with enough detail that the UI can
replay it without re-running the model: the query-centric subgraph before and
after each step (as triplet ids of the source graph), the candidates the step
considered with their scores, the choice, the raw model text, model calls,
token counts and timings.  Everything is a dataclass of JSON-native values so
that a saved trace reloads identically (``Trace.from_dict(t.to_dict()) == t``).

Method-specific detail that does not fit the common fields goes into
``Step.extra`` / ``Trace.extra`` (JSON-native dicts); the UI knows how to draw
the extras of each method (READS abstract structure, RoK PageRank, ...).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import progress
from .validate import TraceFormatError, dataclass_from_json, json_kind

SCHEMA_VERSION = 1

TripletTuple = tuple[str, str, str]


@dataclass
class TokenOption:
    """One token the constraint allowed at a decoding position."""

    token: str
    token_id: int
    prob: float


@dataclass
class TokenPosition:
    """The token-level view of one decoding position inside a triplet."""

    chosen: str
    chosen_id: int
    chosen_prob: float
    allowed: list[TokenOption] = field(default_factory=list)
    n_allowed: int = 0


@dataclass
class Candidate:
    """An option a step considered: a triplet, a relation, a path, a plan step...

    ``triplet_id`` points into the source graph when the candidate is a graph
    triplet; ``triplet`` repeats its text so a trace is readable on its own.
    ``kept`` marks candidates the step retained (beam survivors, chosen option).
    """

    label: str
    score: float
    triplet_id: int | None = None
    triplet: TripletTuple | None = None
    prob: float | None = None
    kept: bool = False
    beam: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelCall:
    """One request to the language model (a generation or a scoring batch)."""

    purpose: str
    prompt_tokens: int
    output_tokens: int
    forward_passes: int
    seconds: float
    prompt: str = ""
    output: str = ""


@dataclass
class Step:
    """One step of a method.

    ``kind`` names the step type, prefixed by the method (``dog.triplet``,
    ``cot.check``, ``direct.answer``, ``reads.search``, ``rok.paths``,
    ``lpkg.search``; docs/trace-format.md lists them).  ``subgraph_before`` and
    ``subgraph_after`` are triplet ids of the source graph; ``added_entities``
    are the entities this step made visible.
    """

    index: int
    kind: str
    title: str = ""
    beam: int | None = None
    subgraph_before: list[int] = field(default_factory=list)
    subgraph_after: list[int] = field(default_factory=list)
    added_entities: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    choice: str | None = None
    chosen_triplet_id: int | None = None
    model_text: str = ""
    token_view: list[TokenPosition] = field(default_factory=list)
    model_calls: list[ModelCall] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChainTriplet:
    """One triplet a method cites, and whether the graph supports it."""

    head: str
    relation: str
    tail: str
    triplet_id: int | None = None
    in_graph: bool = False
    grounded: bool = False
    reason: str = ""


@dataclass
class FaithfulnessReport:
    """Every triplet a method cites, checked against the graph.

    ``ill_triplets`` counts triplets that break well-formedness (DoG §2.2):
    absent from the graph, or touching no entity visited before or a topic
    entity.
    """

    checked: int = 0
    in_graph: int = 0
    ill_triplets: int = 0
    answers_in_graph: int = 0
    answers_total: int = 0
    details: list[ChainTriplet] = field(default_factory=list)

    @property
    def ill_rate(self) -> float:
        return self.ill_triplets / self.checked if self.checked else 0.0


@dataclass
class Answer:
    """A final answer, linked to a graph entity when possible."""

    text: str
    entity: str | None = None
    in_graph: bool = False
    score: float | None = None
    # added from the graph, not written by the model (kgqa_core.answers.completion)
    completed_from_graph: bool = False
    # the model wrote another name for the chain's entity `entity` ("German" for "germans"): its text
    mapped_from: str | None = None
    # how the written answer met an entity the chain reached (kgqa_core.answers.chain_entities.MATCHES):
    # "exact", "case", "number", "qualified", "inflection", "subject", "embedding"; "" when it is not a chain entity (linked graph-wide, or not at all)
    match: str = ""


# The phases of `CostBreakdown.seconds`, in the order they are shown, with the words shown for them.
PHASE_LABELS: dict[str, str] = {
    progress.GRAPH_FETCH: "fetching the graph from the store",
    progress.LOADING: "loading models (once per process)",
    progress.LINKING: "linking topic entities",
    progress.QUESTION_READING: "reading the question (its plan, outside model calls)",
    progress.CONTEXT_RANKING: "ranking graph triplets (prompt context, hub neighbourhoods, paths)",
    progress.SUBGRAPH: "query-centric subgraph G_q, step offers and tries",
    progress.PROMPT_READING: "model reading prompts (beyond the cached prefix)",
    progress.WRITING: "model writing text",
    progress.FORCED_RUNS: "model writing triplets under the trie (forced runs)",
    progress.OPTION_SCORING: "model scoring options",
    progress.ANSWERS: "mapping, completing and checking answers",
    progress.OTHER: "other (prompt building, trace recording, ...)",
}


@dataclass
class CostBreakdown:
    """Where one run's time went, phase by phase, and what the model read and wrote.

    ``seconds`` maps a phase (`PHASE_LABELS`' keys; a newer writer's unknown
    key is shown by its name) to the seconds charged to it: each moment of
    the run goes to the innermost phase open then (a model's prompt read
    inside G_q building is prompt reading), and ``other`` holds the rest,
    so the values sum to `Trace.seconds`.  ``entries`` counts how often each
    phase was entered.  The counts: prompt tokens the model read beyond any
    cached prefix, prompt tokens served from the prefix cache, tokens the
    model generated (free text and triplets), of those the ones the graph's
    trie forced (the only continuation a triplet allowed: read with the
    model's next choice in one pass, not decoded one by one), and model
    calls.  Recorded by
    `run_method` for every method (`kgqa_core.methods.phase_clock`); traces
    written before it have none (``Trace.costs`` is None).
    """

    seconds: dict[str, float] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    prompt_tokens_read: int = 0
    prompt_tokens_cached: int = 0
    tokens_written: int = 0
    tokens_forced: int = 0  # of tokens_written, those the trie forced (0 in traces written before it was counted)
    model_calls: int = 0

    @property
    def tokens_chosen(self) -> int:
        """Tokens the model chose one decoding step at a time: those written, less those the trie forced."""
        return max(0, self.tokens_written - self.tokens_forced)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def add(self, phase: str, seconds: float) -> None:
        """Time spent around the run (a store's fetch before it), added to ``phase``."""
        self.seconds[phase] = round(self.seconds.get(phase, 0.0) + seconds, 4)
        self.entries[phase] = self.entries.get(phase, 0) + 1

    def rows(self) -> list[tuple[str, str, float]]:
        """(phase, its words, seconds) for every phase with time, known phases in `PHASE_LABELS` order."""
        known = [k for k in PHASE_LABELS if k in self.seconds]
        rest = sorted(k for k in self.seconds if k not in PHASE_LABELS)
        return [(k, PHASE_LABELS.get(k, k), self.seconds[k]) for k in known + rest if self.seconds[k] > 0]


@dataclass
class Trace:
    """Everything one method did for one question."""

    method: str
    question: str
    model: str = ""
    model_revision: str = ""
    backend: str = ""  # the model backend that ran it ("llama.cpp", "transformers", ...)
    parameters: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    graph_fingerprint: str = ""
    graph_name: str = ""
    topic_entities: list[str] = field(default_factory=list)
    # the answers the asker expected (Ask's gold field, ``ask --gold``, an evaluated question's gold);
    # empty when none was given.  Stored with the run so Replay, Compare and Runs grade it after a reload.
    gold_answers: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    chains: list[list[ChainTriplet]] = field(default_factory=list)
    chain_scores: list[float] = field(default_factory=list)
    faithfulness: FaithfulnessReport = field(default_factory=FaithfulnessReport)
    raw_output: str = ""
    model_calls: int = 0
    forward_passes: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    graph_queries: int = 0  # queries sent to a graph store (a SPARQL endpoint); 0 for an upload
    graph_seconds: float = 0.0  # their wall time, part of `seconds`
    costs: CostBreakdown | None = None  # where `seconds` went, phase by phase (None in traces written before it)
    error: str = ""
    stopped: bool = False  # the user stopped the run: the steps are the partial run (MethodRequest.should_stop)
    notes: list[str] = field(default_factory=list)
    created_at: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        return _to_jsonable(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Any) -> "Trace":
        """A trace from JSON data, every field checked (`validate.py`), or `TraceFormatError` naming the first bad one."""
        if not isinstance(data, dict):
            raise TraceFormatError(f"not a trace: expected a JSON object, got {json_kind(data)}")
        if "method" not in data or "question" not in data:
            raise TraceFormatError("not a trace: expected an object with 'method' and 'question'")
        version = data.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool):
            raise TraceFormatError(f"field schema_version: expected an integer, got {json_kind(version)}")
        if version > SCHEMA_VERSION:
            raise TraceFormatError(
                f"trace schema version {version} is newer than this workbench supports ({SCHEMA_VERSION})"
            )
        return dataclass_from_json(cls, data)

    @classmethod
    def from_json(cls, text: str) -> "Trace":
        from ..files import JsonProblem, loads_json

        try:
            data = loads_json(text)
        except JsonProblem as exc:
            raise TraceFormatError(f"not valid JSON: {exc}") from None
        return cls.from_dict(data)

    # --------------------------------------------------------------- helpers
    @property
    def answer_texts(self) -> list[str]:
        return [a.text for a in self.answers]

    @property
    def best_chain(self) -> list[ChainTriplet]:
        return self.chains[0] if self.chains else []

    def add_step(self, step: Step) -> Step:
        step.index = len(self.steps)
        self.steps.append(step)
        return step


MAX_TRACE_BYTES = 256 * 1024 * 1024


def save_trace(trace: Trace, path: str | Path) -> Path:
    """Write a trace atomically (unique temp file + rename), so concurrent savers never clash."""
    from ..files import atomic_write_text

    return atomic_write_text(Path(path), trace.to_json())


def load_trace(path: str | Path) -> Trace:
    """Read and validate a trace file; every problem is a one-line `TraceFormatError` naming the file."""
    from ..files import FileTooLargeError, NotRegularFileError, read_regular_file

    path = Path(path)
    try:
        data = read_regular_file(path, max_bytes=MAX_TRACE_BYTES)
    except (NotRegularFileError, FileTooLargeError) as exc:
        raise TraceFormatError(str(exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceFormatError(f"{path}: not UTF-8 text") from None
    try:
        return Trace.from_json(text)
    except TraceFormatError as exc:
        raise TraceFormatError(f"{path}: {exc}") from None


# ---------------------------------------------------------------- internals
def _to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None if value != value else (1e308 if value > 0 else -1e308)
    return value
