"""The model's draft of the loaded graph's relation vocabulary, written in a worker thread.

Why a job: a draft asks the model about every relation (about two seconds each for the 1.5B on this CPU, so
minutes for a graph of a few hundred relations), and the page must stay usable, show how far it got and stop
when asked.  What is drafted until a stop is kept.  The job never touches Streamlit; the vocabulary panel
polls `progress()` and, when the job is done, merges `result()` into the vocabulary text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kgqa_core.reading.drafting import (DraftCosts, draft_relation, drafted_source, drop_shared_aliases,
                                       languages_comment, relation_facts)
from kgqa_core.reading.vocabulary import RelationVocabulary

from .run_job import Job


@dataclass(frozen=True)
class DraftProgress:
    done: bool
    relations_done: int
    relations_total: int
    current: str  # the relation the model is asked about now ("" when none)
    elapsed: float
    stopped: bool
    error: str
    log: tuple[str, ...]


class DraftJob(Job):
    """Drafts `relations` of `graph` with the model `model_name` (loaded by `load_model`)."""

    def __init__(self, graph: Any, relations: list[str], model_name: str,
                 load_model: Callable[[str, Callable[[str], None]], Any], languages: bool = True) -> None:
        super().__init__()
        self.languages = languages  # tell the model a name's language when judged not English (as the CLI's draft)
        self.graph = graph
        self.graph_fingerprint = getattr(graph, "fingerprint", "")
        self.relations = list(relations)
        self.model_name = model_name
        self._load_model = load_model
        self._done_count = 0
        self._current = ""
        self._error = ""
        self._drafted = RelationVocabulary()
        self.costs = DraftCosts()
        # (the text the draft was merged into, what it added): kept by the page (script threads only), so that a
        # reload, which adopts the job with an empty session state, shows the note again (the text itself comes
        # back with the session record, `persist`)
        self.note: tuple[str, str] | None = None

    def _work(self) -> None:
        try:
            model = self._load(self._load_model, self.model_name, "Vocabulary draft")
            facts = relation_facts(iter(self.graph))
            from kgqa_core.reading.description_store import DescriptionStore

            store = DescriptionStore.for_model(model)  # what the readers or a draft already asked this model file
            with self._lock:
                self._phase = "drafting"
                self._drafted = RelationVocabulary({}, drafted_source(model))
            for relation in self.relations:
                if self._stop.is_set():
                    self._say("Stopped: what was drafted so far is kept.")
                    break
                with self._lock:
                    self._current = relation
                aliases = draft_relation(model, relation, facts, self.costs, store, self.languages)
                with self._lock:
                    self._done_count += 1
                    if aliases:
                        self._drafted.entries[relation] = aliases
        except Exception as exc:  # shown on the page as text; what was drafted is kept
            with self._lock:
                self._error = f"The draft failed: {type(exc).__name__}: {exc}"
        finally:
            with self._lock:
                self._current = ""

    def result(self) -> RelationVocabulary:
        """What was drafted (so far), without the aliases shared by several relations (as the CLI's draft)."""
        with self._lock:
            return drop_shared_aliases(RelationVocabulary(dict(self._drafted.entries), self._drafted.source))

    def progress(self) -> DraftProgress:  # type: ignore[override]
        import time

        with self._lock:
            end = self.finished if self.finished is not None else time.monotonic()
            return DraftProgress(done=self.finished is not None, relations_done=self._done_count,
                                 relations_total=len(self.relations), current=self._current,
                                 elapsed=end - self.started, stopped=self._stop.is_set(), error=self._error,
                                 log=tuple(self._log))


def merged_text(text: str, drafted: RelationVocabulary, relations_asked: int,
                languages: dict[str, str] | None = None) -> str:
    """`text` (the user's vocabulary, unchanged) with the drafted relations it lacks appended under a comment.

    The user's own lines win: a relation the text already describes is never overwritten.
    """
    have = set()
    try:
        have = set(RelationVocabulary.parse(text).entries)
    except ValueError:
        pass  # a text with errors is kept as it is; the draft's lines come after it
    new = {r: a for r, a in drafted.entries.items() if r not in have}
    if not new:
        return text
    head = (f"# {drafted.source or 'drafted by the model'}: {len(new)} of {relations_asked} relation(s) described; "
            "check and correct before relying on it\n")
    head += languages_comment({r: lang for r, lang in (languages or {}).items() if r in new})
    body = "".join(f"{r}: {', '.join(a)}\n" for r, a in new.items())
    sep = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{sep}{head}{body}"
