"""The model's look at what kind of thing each likely walk reaches, read from the graph around it.

Why: an unsure reading's likeliest walks often differ by one hop, and the
question's answer noun ("which country ...", "which label ...") says which
one is meant: a walk one hop short reaches a city where a country is asked
for.  The entity's name rarely says its kind in a user's graph (a made-up,
coded or foreign name), and neither do the relations' names (a sentence
embedder finds "city" nearer `located in` than "country" is), but its facts
in the graph do: an entity that is `located_in` something, where people are
`born_in`, is a city-like thing, and a 1.5B model reads that.

So the model is asked, for the entity each of the likeliest walks reaches,
with a few of that entity's facts from the graph before it, how likely the
question's noun is as the kind of thing it is ("What kind of thing is
Nairobi?  Nairobi is a" -> " country."), one prompt per entity.  The noun
ends the answer: as its first word alone, "movie" was likeliest for a
director ("a movie director").  The noun's own prior is the same after every
entity, so the differences between the walks are what the facts say
(pointwise mutual information, as in `relation_look`); a yes/no question
was tried first and the 1.5B said yes to "is Nairobi a country" (84%).  Nothing comes from a word list: the noun is the question's own (the
word after "which"/"what", `alignment.answer_nouns`), the facts are the
graph's, the judgement is the model's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .reading import RelationPlan
from .vocabulary import RelationVocabulary, relation_text

FACTS = 4  # facts of each entity shown: one per relation and direction first


@dataclass
class KindLook:
    """For each entity looked at, log P(" noun." | its facts, "<entity> is a"), and the model calls that read it."""

    noun: str
    log_kind: dict[str, float] = field(default_factory=dict)
    calls: list[Any] = field(default_factory=list)
    forward_passes: int = 0

    def walk_score(self, plan: RelationPlan) -> float:
        """A walk's score: `below_best` of the entity it reaches (0 for one not looked at)."""
        return self.below_best(plan.example) if plan.example in self.log_kind else 0.0

    def below_best(self, entity: str) -> float:
        """The noun's log-probability after `entity` less the best entity's (0 for the best)."""
        return self.log_kind[entity] - max(self.log_kind.values())


def entity_facts(graph: Any, entity: str, vocabulary: RelationVocabulary | None = None,
                 limit: int = FACTS) -> list[str]:
    """Up to `limit` of `entity`'s facts in the graph as "head — relation words — tail" lines: one per relation and
    direction first (the variety says more of its kind than the same relation again), in a stable order.

    Examples
    --------
    >>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    >>> g = KnowledgeGraph.from_triplets([("Nora", "born_in", "Harbourton"), ("Harbourton", "located_in", "Veloria"),
    ...                                   ("Ivo", "born_in", "Harbourton")])
    >>> entity_facts(g, "Harbourton", limit=2)
    ['Ivo — born in — Harbourton', 'Harbourton — located in — Veloria']
    """
    seen: set[tuple[str, bool]] = set()
    first, rest = [], []
    for t in sorted(graph.neighbours(entity), key=lambda t: (t.relation, t.head, t.tail)):
        kind = (t.relation, t.head == entity)
        line = f"{t.head} — {relation_text(t.relation, vocabulary)} — {t.tail}"
        (rest if kind in seen else first).append(line)
        seen.add(kind)
    return (first + rest)[:limit]


def kind_prompt(entity: str, facts: Sequence[str]) -> str:
    """The entity's facts, a question what kind of thing it is, and the start of the answer.

    (Asked as a question and answered, the 1.5B's "city" for Nairobi after its facts is 4.6 nats surer than
    "country"; after a bare "So Nairobi is a", 2.7.)"""
    told = "\n".join(facts) if facts else "(no facts)"
    return f"Facts:\n{told}\n\nQuestion: What kind of thing is {entity}?\nAnswer: {entity} is a"


def kind_look(model: Any, graph: Any, noun: str, plans: Sequence[RelationPlan],
              vocabulary: RelationVocabulary | None = None) -> KindLook:
    """How likely the question's answer noun is as the kind of thing each of `plans` reaches (see the module's
    docstring).

    Parameters
    ----------
    model : a model backend (`kgqa_core.models.interface`)
    graph : the question's graph (its facts about each entity are shown)
    noun : the question's answer noun ("country")
    plans : the walks, each judged by the entity it reaches (`RelationPlan.example`); one judgement per entity
    vocabulary : the user's aliases, written after a relation's words

    Returns
    -------
    A `KindLook`: log P(" noun.") per entity and the model calls (kept in the trace).
    """
    entities = [e for e in dict.fromkeys(p.example for p in plans) if e]
    look = KindLook(noun=noun)
    if not entities:
        return look
    scored = []
    with model.lock:
        for entity in entities:
            prompt = kind_prompt(entity, entity_facts(graph, entity, vocabulary))
            before = model.counter.forward_passes
            scores = model.score_continuations(prompt, [f" {noun}."])  # the noun ending the answer
            scored.append((entity, prompt, scores, model.counter.forward_passes - before))
    for entity, prompt, scores, passes in scored:
        look.log_kind[entity] = float(scores[0].total)
        call = model.call_record(f"reads.reading (what kind of thing {entity} is)", scores, prompt)
        call.forward_passes = passes
        look.calls.append(call)
        look.forward_passes += passes
    return look
