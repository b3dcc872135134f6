"""What a question asks of the graph: how many hops, along which relations, in which order, and how sure.

Every guidance piece a method layers on its paper's algorithm (DoG's step
filters, READS' expansion filter, RoK's path length, the answer ranking)
reads one `QuestionReading`, so they agree with each other and the trace
shows one account of the question.  A reading comes from a
`QuestionReader` (`kgqa_core.reading.readers`); the empty reading
(`QuestionReading.unread`) asks for nothing, and every piece then behaves as
the paper does.

Guidance is hard only when the reading is *sure* (its confidence at least
the method's ``reading_sure_at``): an unsure reading may still raise a step
budget, which removes nothing, but never narrows what a step offers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, Sequence

MAX_HOPS = 3


@dataclass(frozen=True)
class PlanHop:
    """One hop of a relation plan: a relation, walked from head to tail (forward) or back."""

    relation: str
    forward: bool = True

    @property
    def label(self) -> str:
        return self.relation if self.forward else f"{self.relation} (reverse)"


@dataclass(frozen=True)
class RelationPlan:
    """A path of relations from a topic entity that exists in the graph, with the reader's belief in it."""

    topic: str
    hops: tuple[PlanHop, ...]
    confidence: float = 0.0  # in [0, 1]: the reader's probability that this path answers the question
    example: str = ""  # an entity the path reaches (shown to the model and in the trace)
    reaches: int = 0  # entities the path reaches (as far as the reader looked)
    walk: tuple[str, ...] = ()  # one walk along the path: the topic, then an entity at each hop
    # the text of an earlier path over the same relations that reaches the same entities (a relation the graph
    # holds both ways, walked the other way round): the same walk in other words (`paths.relation_paths`)
    twin_of: str = field(default="", compare=False)

    @property
    def example_text(self) -> str:
        """One walk along the plan, entity by entity: ``Ann -spouse-> Bob -ethnicity-> germans``."""
        return self.walk_text()

    def walk_text(self, one_arrow: bool = False) -> str:
        """`example_text`; with ``one_arrow`` a hop walked backwards is written ``-relation (reverse)-> B``."""
        return self.walk_spans(one_arrow)[0]

    def walk_spans(self, one_arrow: bool = False) -> tuple[str, list[tuple[int, int]]]:
        """`walk_text` and where in it the names of the entities the walk passes after its first stand.

        One formatter for both, so the reader that looks past the names (`readers.entity_free_ids`) finds them
        where the text put them.  Without a whole walk the text is the plan's `text` and there are no names.

        >>> plan = RelationPlan("Ann", (PlanHop("spouse"), PlanHop("born_in", False)), walk=("Ann", "Bob", "Delft"))
        >>> text, spans = plan.walk_spans(one_arrow=True)
        >>> text, [text[a:b] for a, b in spans]
        ('Ann -spouse-> Bob -born_in (reverse)-> Delft', ['Bob', 'Delft'])
        """
        if len(self.walk) != len(self.hops) + 1:
            return self.text, []
        text, spans = self.walk[0], []
        for h, e in zip(self.hops, self.walk[1:]):
            if h.forward:
                text += f" -{h.relation}-> "
            else:
                text += f" -{h.relation} (reverse)-> " if one_arrow else f" <-{h.relation}- "
            spans.append((len(text), len(text) + len(e)))
            text += e
        return text, spans

    @property
    def relations(self) -> list[str]:
        return [h.relation for h in self.hops]

    @property
    def walk_key(self) -> str:
        """The text of the first path that walks this walk: the same for a path and its `twin_of`."""
        return self.twin_of or self.text

    @property
    def text(self) -> str:
        """The plan as the workbench writes triplets: ``X -> spouse -> ethnicity``."""
        return " -> ".join([self.topic, *(h.label for h in self.hops)])


@dataclass
class QuestionReading:
    """One reading of a question against a graph (see the module docstring).

    ``hops`` is 0 when the reader could not tell.  ``relations`` are those the
    question asks to walk, ``uses`` how many hops each accounts for (empty
    when some hop's relation is unknown) and ``order`` the relation of each
    hop from the topic entity out (empty when unknown).  ``open_ended``: the
    best plan is as long as the reader plans at most, so the question may ask
    more hops than it could see; ``hops`` is then a lower bound (a method may
    walk past it, never stop short of it).
    """

    reader: str
    hops: int = 0
    confidence: float = 0.0
    sure: bool = False
    relations: list[str] = field(default_factory=list)
    uses: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    plans: list[RelationPlan] = field(default_factory=list)  # best first
    explanation: str = ""  # in plain words, for the trace
    mentions: list[str] = field(default_factory=list)  # question words that named a relation (wording reader)
    seconds: float = 0.0
    forward_passes: int = 0  # the model's forward passes the reading took
    calls: list[Any] = field(default_factory=list)  # the model calls the reader made (trace ModelCall records)
    open_ended: bool = False  # the plan reaches the reader's longest walk: the question may ask more hops

    def at_horizon(self, max_hops: int) -> "QuestionReading":
        """This reading, marked open-ended (and said so) when its plan is `max_hops` long: the reader saw no further."""
        if self.read and self.hops >= max_hops and not self.open_ended:
            self.open_ended = True
            self.explanation += f"; {max_hops} hops is the longest walk the reader plans, so the question may ask more"
        return self

    @classmethod
    def unread(cls, why: str = "the question was not read (the paper's algorithm)") -> "QuestionReading":
        return cls(reader="none", explanation=why)

    @property
    def read(self) -> bool:
        return self.hops > 0

    def guides(self, sure_at: float) -> bool:
        """Whether this reading is sure enough to narrow what a step offers (hard guidance)."""
        return self.read and self.sure and self.confidence >= sure_at

    def note(self, budget_name: str, budget: int) -> str:
        """One line for a budget the reading set: which budget, and what the reading said."""
        return f"{budget_name} {budget} from the question's reading: {self.explanation}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("calls", None)
        d["plans"] = [{"text": p.text, "confidence": round(p.confidence, 4), "example": p.example,
                       "reaches": p.reaches} for p in self.plans]
        d["confidence"] = round(self.confidence, 4)
        d["seconds"] = round(self.seconds, 4)
        return d


class QuestionReader(Protocol):
    """Anything that reads a question against a graph (the graph's lexicon and paths, the model, wording rules)."""

    name: str

    def read(self, question: str, graph: Any, topics: Sequence[str]) -> QuestionReading: ...


def uses_of(relations: Sequence[str]) -> dict[str, int]:
    """How many hops of a path each relation accounts for."""
    out: dict[str, int] = {}
    for r in relations:
        out[r] = out.get(r, 0) + 1
    return out


def plan_allows(walked: Sequence[str], relation: str, uses: dict[str, int], order: Sequence[str] = ()) -> bool:
    """Whether a path that has walked `walked` (relations, from the topic entity out) may walk `relation` next.

    The one rule DoG's step filter and READS' expansion filter share: a
    relation is walked at most as often as the reading plans it (`uses`),
    and, when the reading orders the hops, hop k walks ``order[k]``.

    Examples
    --------
    >>> plan_allows(["spouse"], "ethnicity", {"spouse": 1, "ethnicity": 1}, ["spouse", "ethnicity"])
    True
    >>> plan_allows([], "ethnicity", {"spouse": 1, "ethnicity": 1}, ["spouse", "ethnicity"])
    False
    >>> plan_allows(["spouse"], "spouse", {"spouse": 1, "ethnicity": 1})
    False
    """
    if list(walked).count(relation) >= uses.get(relation, 0):
        return False
    return not (order and len(walked) < len(order) and relation != order[len(walked)])
