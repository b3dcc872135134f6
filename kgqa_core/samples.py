"""The sample graphs shipped in ``sample_graphs/`` with their example questions.

A new user should be able to ask a question within seconds of starting the
app, so the samples are small real graphs with gold answers:
``sample_graphs/catalog.json`` lists them, and each has a graph file and a
questions file in the evaluation dataset format (JSON Lines with ``id``,
``question``, ``topic_entities``, ``answers``, ``graph_file`` relative to the
questions file).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .graph.knowledge_graph import KnowledgeGraph
from .graph.loaders import load_graph

SAMPLES_ENV = "KGQA_SAMPLES_DIR"


class SampleError(ValueError):
    """A missing sample or a malformed catalog / questions file."""


@dataclass(frozen=True)
class SampleQuestion:
    id: str
    question: str
    topic_entities: list[str]
    answers: list[str]
    extra: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class SampleGraph:
    name: str
    title: str
    description: str
    graph_path: Path
    questions_path: Path
    attribution: str


def samples_dir() -> Path:
    """Where the samples live: $KGQA_SAMPLES_DIR, else ``sample_graphs/`` beside the package."""
    env = os.environ.get(SAMPLES_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "sample_graphs"


def list_samples() -> list[SampleGraph]:
    """The samples in catalog order."""
    root = samples_dir()
    catalog = root / "catalog.json"
    try:
        entries = json.loads(catalog.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SampleError(f"no sample catalog at {catalog}") from None
    except json.JSONDecodeError as exc:
        raise SampleError(f"{catalog.name}, line {exc.lineno}: invalid JSON ({exc.msg})") from None
    out = []
    for i, e in enumerate(entries, start=1):
        try:
            out.append(
                SampleGraph(
                    name=e["name"],
                    title=e.get("title", e["name"]),
                    description=e.get("description", ""),
                    graph_path=root / e["graph"],
                    questions_path=root / e["questions"],
                    attribution=e.get("attribution", ""),
                )
            )
        except (KeyError, TypeError) as exc:
            raise SampleError(f"{catalog.name}, entry {i}: missing field {exc}") from None
    return out


def get_sample(name: str) -> SampleGraph:
    samples = list_samples()
    for s in samples:
        if s.name == name:
            return s
    raise SampleError(f"no sample named {name!r}; available: {', '.join(s.name for s in samples)}")


def read_questions(path: str | os.PathLike[str]) -> list[SampleQuestion]:
    """Questions in the evaluation dataset format (JSON Lines); errors name file and line."""
    p = Path(path)
    out = []
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise SampleError(f"questions file not found: {p}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            q = SampleQuestion(
                id=str(d.get("id", f"{p.stem}-{n}")),
                question=str(d["question"]),
                topic_entities=[str(x) for x in d.get("topic_entities", [])],
                answers=[str(x) for x in d["answers"]],
                extra={k: v for k, v in d.items() if k not in ("id", "question", "topic_entities", "answers")},
            )
        except json.JSONDecodeError as exc:
            raise SampleError(f"{p.name}, line {n}: invalid JSON ({exc.msg})") from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise SampleError(f"{p.name}, line {n}: missing or malformed field {exc}") from None
        out.append(q)
    return out


def load_sample(name: str) -> tuple[KnowledgeGraph, list[SampleQuestion]]:
    """A sample's graph and its example questions."""
    sample = get_sample(name)
    graph = load_graph(sample.graph_path, name=sample.name)
    return graph, read_questions(sample.questions_path)
