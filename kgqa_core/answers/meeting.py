"""Answers the graph links to more of the question's entities lead: where the question's entities meet.

A question that names two entities usually asks for what they share:
"which musician of the Chicago Symphony Orchestra is from Italy", "who
plays the trumpet in the Berlin Philharmonic".  A chain walks out from one
of them; its answers, completed from the graph, are then every member of
the orchestra or every Italian, and the first of them is rarely the one
that meets the other entity.  The graph says which ones do: an answer
with a triplet to the other entity.

`meet_topics` ranks the answers by how many of the question's entities
each is linked to by one triplet (either direction), most first, and
keeps the order within a rank.  It applies only when the question has at
least two entities in the graph and the answers differ in that count (a
question with one entity, or answers all alike, are left as they are).
Answers the *graph* added to the model's (`Answer.completed_from_graph`)
that are linked to fewer entities than the best are dropped: they were
added because they share the chain's last relation, and the question's
other entity rules them out.  The model's own answers that are linked to
fewer are ranked after, or left out when one of its own answers is among
the leaders: the model named the one that meets them all, and its other
names list one entity's side (DoG's recorded answers on the two-entity
dev sets, re-scored: summed F1 9.08 -> 13.21 of 20, first answers the
same).  When no answer meets every one of the question's entities but an
entity the chain wrote does (`chain_entities`), that entity leads, added
from the graph: the chain reached what the question asks for and the
answer line named something else, often the question's own entity ("which
parser is written in Corvid": a chain through Quillon, which is both,
answered "parser"; "which project maintained by the Kettle Foundation
depends on Osprey": a chain that wrote Marten, maintained by the one and
depending on the other, answered one of Marten's other dependencies).
Nothing here knows a word of any domain: it reads the graph's triplets only.

In neither paper (DoG answers from one chain; READS prunes its structure
by the question's other entities as constraints, when the model chooses
one); DoG's and READS' ``meet_topics`` switch turns it off, and so does
their ``paper`` preset.  RoK ranks paths by the key entities they hold, a
related idea.

Examples
--------
>>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
>>> from kgqa_core.trace.schema import Answer
>>> g = KnowledgeGraph.from_triplets([("Ann", "member_of", "Band"), ("Bob", "member_of", "Band"),
...                                   ("Ann", "nationality", "Italy"), ("Cy", "nationality", "Italy")])
>>> found = [Answer("Bob", "Bob", True), Answer("Ann", "Ann", True, completed_from_graph=True),
...          Answer("Cy", "Cy", True, completed_from_graph=True)]
>>> [a.text for a in meet_topics(found, g, ["Band", "Italy"]).answers]
['Ann', 'Bob']

The chain wrote Ann, who meets both; the answer line named the band itself:

>>> met = meet_topics([Answer("Band", "Band", True)], g, ["Band", "Italy"], chain_entities=["Bob", "Ann", "Band"])
>>> [(a.text, a.completed_from_graph) for a in met.answers], met.from_chain
([('Ann', True), ('Band', False)], ['Ann'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..trace.schema import Answer

NOTE_HEAD = "answers where the question's entities meet:"  # how the trace's note starts (the CLI prints it)
MAX_CHECKED = 200  # answers whose triplets are read (a completed list is at most 100, plus the model's own)


@dataclass(frozen=True)
class Meeting:
    """The answers after ranking, and what the trace says about it."""

    answers: list[Answer]
    topics: list[str]  # the question's entities in the graph
    linked: dict[str, list[str]] = field(default_factory=dict)  # answer -> the topics it has a triplet with
    leading: list[str] = field(default_factory=list)  # answers linked to the most topics
    dropped: list[str] = field(default_factory=list)  # graph-added answers linked to fewer
    moved: list[str] = field(default_factory=list)  # the model's answers linked to fewer, ranked after
    left_out: list[str] = field(default_factory=list)  # the model's answers linked to fewer, when one of its own leads
    from_chain: list[str] = field(default_factory=list)  # entities the chain wrote that meet every topic, added to lead

    @property
    def note(self) -> str:
        best = max((len(v) for v in self.linked.values()), default=0)
        names = ", ".join(self.topics)
        shown = ", ".join(self.leading[:5]) + (f" and {len(self.leading) - 5} more" if len(self.leading) > 5 else "")
        text = (f"{NOTE_HEAD} the question names {len(self.topics)} graph entities ({names}); "
                f"{len(self.leading)} answer(s) have a triplet with {best} of them and lead: {shown}")
        if self.from_chain:
            text += (f"; no answer of the model's had a triplet with all of them, but the chain wrote "
                     f"{', '.join(self.from_chain)}, which has: added from the graph to lead")
        if self.moved:
            text += f"; the model's answer(s) {', '.join(self.moved)} have fewer and are ranked after"
        if self.left_out:
            text += (f"; the model's answer(s) {', '.join(self.left_out)} have fewer and were left out, as an answer "
                     "of its own meets more")
        if self.dropped:
            text += f"; {len(self.dropped)} answer(s) the graph had added have fewer and were left out"
        return text


def linked_topics(graph: Any, entities: Sequence[str], topics: Sequence[str]) -> dict[str, list[str]]:
    """For each of `entities`, the `topics` it shares a triplet with (either direction), in `topics`' order.

    Reads each entity's triplets in one batch where the store has one
    (`GraphStore.neighbours_batch`: one query on a SPARQL store).
    """
    wanted = set(topics)
    names = list(dict.fromkeys(e for e in entities if e))
    if hasattr(graph, "neighbours_batch"):
        around = graph.neighbours_batch(names).triplets
    else:
        around = {e: graph.neighbours(e) for e in names}
    out: dict[str, list[str]] = {}
    for e in names:
        met = {t.tail if t.head == e else t.head for t in around.get(e, ())} & wanted
        out[e] = [t for t in topics if t in met and t != e]
    return out


def meet_topics(answers: Sequence[Answer], graph: Any, topics: Sequence[str],
                chain_entities: Sequence[str] = ()) -> Meeting | None:
    """`answers` ranked by how many of the question's `topics` each has a triplet with (see the module docstring).

    Parameters
    ----------
    answers : the method's answers, in its order (the model's own first, then those completed from the graph).
    graph : the graph store the question is asked over.
    topics : the question's entities.
    chain_entities : the entities the method's chain wrote, in order; those that meet every topic lead when no
        answer does (added, ``completed_from_graph``).

    Returns
    -------
    The `Meeting`, or None when the rule does not apply: fewer than two of
    `topics` in the graph, or every answer linked to as many of them and no
    entity of the chain meeting more.
    """
    in_graph = [t for t in dict.fromkeys(topics) if t and graph.has_entity(t)]
    if len(in_graph) < 2:
        return None
    entities = [a.entity for a in answers if a.in_graph and a.entity and a.entity not in in_graph][:MAX_CHECKED]
    wrote = [e for e in dict.fromkeys(chain_entities) if e and e not in in_graph and e not in entities]
    if not entities and not wrote:
        return None
    linked = linked_topics(graph, entities, in_graph) if entities else {}
    counts = {e: len(linked[e]) for e in entities}
    met: list[str] = []
    if wrote and max(counts.values(), default=0) < len(in_graph):  # no answer meets them all: does the chain?
        linked.update(linked_topics(graph, wrote[:MAX_CHECKED], in_graph))  # read only when it may lead
        met = [e for e in wrote if len(linked[e]) == len(in_graph)]
    answers = [Answer(text=e, entity=e, in_graph=True, completed_from_graph=True) for e in met] + list(answers)
    counts.update({e: len(in_graph) for e in met})
    if not counts:
        return None
    best = max(counts.values())
    if best == 0 or (best == min(counts.values()) and not met):
        return None
    own_leads = any(counts.get(a.entity or "") == best and not a.completed_from_graph for a in answers)
    lead, after, dropped, moved, left_out = [], [], [], [], []
    for a in answers:
        n = counts.get(a.entity or "", None)
        if n == best:
            lead.append(a)
        elif n is None:  # names no graph entity, or is a topic entity: after the leaders, in its place
            after.append(a)
        elif a.completed_from_graph:
            dropped.append(a.text)
        elif own_leads:
            left_out.append(a.text)
        else:
            after.append(a)
            moved.append(a.text)
    ranked = lead + after
    return Meeting(answers=ranked, topics=in_graph, linked={e: linked[e] for e in counts},
                   leading=[a.text for a in lead], dropped=dropped, moved=moved, left_out=left_out, from_chain=met)
