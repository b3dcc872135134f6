"""Evaluation datasets: one question a line (JSONL), each with its own graph or a shared one.

A line looks like::

    {"id": "q1", "question": "who directed Heat", "topic_entities": ["Heat"],
     "answers": ["Michael Mann"], "graph": [["Heat", "directed_by", "Michael Mann"], ...],
     "gold_chain": [["Heat", "directed_by", "Michael Mann"]], "type": "1hop"}

Instead of ``graph`` a line may give ``"graph_file": PATH`` (relative to the
dataset file) so that many questions share one graph; each graph file is
loaded once per dataset and the same `KnowledgeGraph` object is handed to every
question that names it.  Every line is validated before anything runs, and all
bad lines are reported together (file, line number, problem) so a user fixes a
file in one pass instead of one error at a time.

Lines are split on ``\n`` only, as JSON Lines says (U+2028, U+0085 or a form
feed inside a question stay in the question, and line numbers are the
editor's).  A ``graph_file`` must resolve to a regular file inside the
dataset's folder (``../`` or an absolute path elsewhere is refused), so a
dataset cannot make the workbench read files it was not given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..files import JsonProblem, NotRegularFileError, atomic_write_text, jsonl_line, loads_json, read_regular_file
from ..files import split_lines
from ..graph.knowledge_graph import KnowledgeGraph
from ..questions import MAX_QUESTION_CHARS

TripletTuple = tuple[str, str, str]

KNOWN_KEYS = {"id", "question", "topic_entities", "answers", "graph", "graph_file", "gold_chain", "type"}

_MAX_REPORTED = 25


@dataclass(frozen=True)
class LineProblem:
    """One bad line of a dataset file."""

    line: int
    problem: str


class DatasetFormatError(ValueError):
    """A dataset file with bad lines; ``problems`` lists every one of them."""

    def __init__(self, file: str, problems: list[LineProblem]) -> None:
        self.file = file
        self.problems = problems
        bad_lines = sorted({p.line for p in problems})
        head = f"{file}: {len(bad_lines)} bad line{'s' if len(bad_lines) != 1 else ''}"
        shown = [f"  line {p.line}: {p.problem}" if p.line else f"  {p.problem}" for p in problems[:_MAX_REPORTED]]
        if len(problems) > _MAX_REPORTED:
            shown.append(f"  ... and {len(problems) - _MAX_REPORTED} more problems")
        super().__init__("\n".join([head, *shown]))

    @property
    def bad_lines(self) -> list[int]:
        return sorted({p.line for p in self.problems})


@dataclass
class EvalQuestion:
    """One benchmark question with its gold answers and the graph it is asked over."""

    id: str
    question: str
    topic_entities: list[str]
    answers: list[str]
    type: str = ""
    gold_chain: list[TripletTuple] | None = None
    triplets: list[TripletTuple] | None = None
    graph_file: Path | None = None
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    _graph: KnowledgeGraph | None = field(default=None, repr=False, compare=False)
    _shared: dict[Path, KnowledgeGraph] | None = field(default=None, repr=False, compare=False)

    def graph(self) -> KnowledgeGraph:
        """The question's graph: built from inline triplets once, or the shared graph file."""
        if self._graph is not None:
            return self._graph
        if self.triplets is not None:
            self._graph = KnowledgeGraph.from_triplets(self.triplets, name=f"{self.id} subgraph")
            return self._graph
        assert self.graph_file is not None
        shared = self._shared if self._shared is not None else {}
        if self.graph_file not in shared:
            from ..graph.loaders import load_graph  # handles every supported graph format

            shared[self.graph_file] = load_graph(self.graph_file)
        self._graph = shared[self.graph_file]
        return self._graph

    def to_dict(self, base_dir: Path | None = None) -> dict[str, Any]:
        """The JSONL form of this question (inverse of the loader)."""
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "topic_entities": list(self.topic_entities),
            "answers": list(self.answers),
        }
        if self.type:
            out["type"] = self.type
        if self.triplets is not None:
            out["graph"] = [list(t) for t in self.triplets]
        elif self.graph_file is not None:
            gf = self.graph_file
            if base_dir is not None:
                try:
                    gf = gf.relative_to(base_dir)
                except ValueError:
                    pass
            out["graph_file"] = str(gf)
        if self.gold_chain is not None:
            out["gold_chain"] = [list(t) for t in self.gold_chain]
        out.update(self.extra)
        return out


@dataclass
class Dataset:
    """A validated list of questions; graph files are shared between questions."""

    path: Path
    questions: list[EvalQuestion]
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[EvalQuestion]:
        return iter(self.questions)

    def __getitem__(self, index: int) -> EvalQuestion:
        return self.questions[index]

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def types(self) -> list[str]:
        return sorted({q.type for q in self.questions if q.type})

    def by_id(self, qid: str) -> EvalQuestion:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(f"no question with id {qid!r} in {self.path}")


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a JSONL dataset; raise `DatasetFormatError` listing every bad line."""
    path = Path(path)
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        raise DatasetFormatError(str(path), [LineProblem(0, "file not found")]) from None
    except NotRegularFileError as exc:
        kind = str(exc).rsplit(": ", 1)[-1]
        raise DatasetFormatError(str(path), [LineProblem(0, f"{kind}; expected a .jsonl file")]) from None
    except OSError as exc:
        raise DatasetFormatError(str(path), [LineProblem(0, f"cannot read: {exc.strerror or exc}")]) from None
    return parse_dataset(data, str(path), base_dir=path.parent.resolve(), path=path)


def parse_dataset(
    data: bytes | str, source: str, base_dir: Path | None = None, path: Path | None = None
) -> Dataset:
    """Validate JSONL text (a file or an upload).

    ``base_dir`` resolves ``graph_file`` entries; an upload has none, so its
    lines must carry their graph inline.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DatasetFormatError(source, [LineProblem(0, f"not UTF-8 text (byte {exc.start})")]) from None
    else:
        text = data
    problems: list[LineProblem] = []
    questions: list[EvalQuestion] = []
    seen_ids: dict[str, int] = {}
    shared: dict[Path, KnowledgeGraph] = {}
    for lineno, raw in split_lines(text):
        if not raw.strip():
            continue
        line_problems: list[str] = []
        question = _parse_line(raw, lineno, base_dir, line_problems)
        if question is not None and not line_problems:
            if question.id in seen_ids:
                line_problems.append(f"duplicate id {question.id!r} (first used on line {seen_ids[question.id]})")
            else:
                seen_ids[question.id] = lineno
        problems.extend(LineProblem(lineno, p) for p in line_problems)
        if question is not None and not line_problems:
            question._shared = shared
            questions.append(question)
    if not problems and not questions:
        problems.append(LineProblem(0, "no questions (the file is empty)"))
    if problems:
        raise DatasetFormatError(source, problems)
    warnings = []
    for q in questions:
        if q.triplets is not None:
            ents = {e for t in q.triplets for e in (t[0], t[2])}
            missing = [e for e in q.topic_entities if e not in ents]
            if missing:
                warnings.append(f"line {q.line}: topic entities not in the question's graph: {missing}")
    return Dataset(path=path or Path(source), questions=questions, warnings=warnings)


def _parse_line(raw: str, lineno: int, base_dir: Path | None, problems: list[str]) -> EvalQuestion | None:
    try:
        obj = loads_json(raw)
    except JsonProblem as exc:
        problems.append(f"not valid JSON ({exc.problem}" + (f" at column {exc.column})" if exc.column else ")"))
        return None
    if not isinstance(obj, dict):
        problems.append(f"expected a JSON object, got {type(obj).__name__}")
        return None

    qid = obj.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        problems.append("'id' must be a non-empty string")
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        problems.append("'question' must be a non-empty string")
    elif len(question.strip()) > MAX_QUESTION_CHARS:
        problems.append(f"'question' is too long: {len(question.strip()):,} characters, at most {MAX_QUESTION_CHARS:,}")
    topics = _string_list(obj, "topic_entities", problems, allow_empty=True)
    answers = _string_list(obj, "answers", problems, allow_empty=False)

    triplets = None
    graph_file = None
    has_graph, has_file = "graph" in obj, "graph_file" in obj
    if has_graph and has_file:
        problems.append("give either 'graph' or 'graph_file', not both")
    elif has_graph:
        triplets = _triplet_list(obj["graph"], "graph", problems, allow_empty=False)
    elif has_file:
        gf = obj["graph_file"]
        if not isinstance(gf, str) or not gf.strip():
            problems.append("'graph_file' must be a path string")
        elif base_dir is None:
            problems.append("'graph_file' needs a dataset saved on disk; an uploaded dataset must carry 'graph' inline")
        else:
            graph_file = _graph_file(gf, base_dir, problems)
    else:
        problems.append("missing 'graph' (a list of [head, relation, tail]) or 'graph_file'")

    gold_chain = None
    if obj.get("gold_chain") is not None:
        gold_chain = _triplet_list(obj["gold_chain"], "gold_chain", problems, allow_empty=True)
    qtype = obj.get("type", "")
    if qtype is None:
        qtype = ""
    if not isinstance(qtype, str):
        problems.append("'type' must be a string")
        qtype = ""
    if problems:
        return None
    extra = {k: v for k, v in obj.items() if k not in KNOWN_KEYS}
    return EvalQuestion(
        id=qid,
        question=question.strip(),
        topic_entities=topics,
        answers=answers,
        type=qtype,
        gold_chain=gold_chain,
        triplets=triplets,
        graph_file=graph_file,
        line=lineno,
        extra=extra,
    )


def _graph_file(gf: str, base_dir: Path, problems: list[str]) -> Path | None:
    """``gf`` resolved against the dataset's folder; it must stay inside it and be a regular file."""
    base = base_dir.resolve()
    try:
        path = (base / gf).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
        problems.append(f"graph_file {gf!r} cannot be resolved ({exc})")
        return None
    if not path.is_relative_to(base):
        problems.append(f"graph_file {gf!r} is outside the dataset's folder; put the graph file beside the dataset")
        return None
    if not path.exists():
        problems.append(f"graph_file {gf!r} not found in the dataset's folder")
        return None
    if not path.is_file():
        problems.append(f"graph_file {gf!r} is not a regular file")
        return None
    return path


def _string_list(obj: dict, key: str, problems: list[str], allow_empty: bool) -> list[str]:
    value = obj.get(key)
    if value is None:
        problems.append(f"missing {key!r} (a list of strings)")
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{key!r} must be a list of strings")
        return []
    value = [v.strip() for v in value if v.strip()]
    if not value and not allow_empty:
        problems.append(f"{key!r} is empty")
    return value


def _triplet_list(value: Any, key: str, problems: list[str], allow_empty: bool) -> list[TripletTuple] | None:
    if not isinstance(value, list):
        problems.append(f"{key!r} must be a list of [head, relation, tail] triplets")
        return None
    out: list[TripletTuple] = []
    for i, item in enumerate(value):
        if (
            not isinstance(item, (list, tuple))
            or len(item) != 3
            or not all(isinstance(x, str) and x.strip() for x in item)
        ):
            problems.append(f"{key!r} item {i} is not a [head, relation, tail] triplet of non-empty strings: {item!r:.80}")
            return None
        out.append((item[0].strip(), item[1].strip(), item[2].strip()))
    if not out and not allow_empty:
        problems.append(f"{key!r} is empty")
    return out


def write_dataset(questions: list[EvalQuestion] | list[dict[str, Any]], path: str | Path) -> Path:
    """Write questions as JSONL (dicts are written as given, questions via `to_dict`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    base = path.parent.resolve()
    lines = [jsonl_line(q.to_dict(base) if isinstance(q, EvalQuestion) else q) + "\n" for q in questions]
    return atomic_write_text(path, "".join(lines))
