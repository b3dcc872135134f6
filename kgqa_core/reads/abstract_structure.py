"""The abstract structure S_k and the retrieved subgraph G_k it summarises (§3.1, App. A).

READS never shows the model the retrieved entities one by one: it groups them
into *semantic nodes*, the entities that share a structural position (same
parent node, same relation, same direction), and shows the model the small
graph of those nodes (Tab. 13/14: ``("Knight Rider", "regular_cast",
"topic_1")``).  Each node keeps the *links* that put its entities there
(parent entity, entity, triplet id), so G_k is exactly the union of the link
triplets, G_k stays a tree rooted at the start entity, and pruning a subtree
(§3.2) is a cascade over links.

Node names are ``type_id`` with one counter over the whole structure, as in
the paper; the root keeps the start entity's own name.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .values import is_date_relation, is_topic_id, looks_like_year, parse_date, parse_number

NODE_TYPES = ("entity", "topic", "num", "date")


def detect_type(entity: str, relation: str | None = None) -> str:
    """The App. A type of one entity name: ``num``, ``date``, ``topic`` or ``entity``.

    A bare year counts as a date only under a relation that talks about time
    (``release_year``, ``date_of_birth``); otherwise it is a number.
    """
    if parse_date(entity) is not None:
        return "date"
    number = parse_number(entity)
    if number is not None:
        if looks_like_year(number) and is_date_relation(relation):
            return "date"
        return "num"
    if is_topic_id(entity):
        return "topic"
    return "entity"


def node_type(entities: Iterable[str], relation: str | None = None) -> str:
    """The type most of a node's entities have (ties go to ``entity``)."""
    counts = Counter(detect_type(e, relation) for e in entities)
    if not counts:
        return "entity"
    best = max(counts.values())
    for t in ("entity", "topic", "date", "num"):
        if counts.get(t) == best:
            return t
    return "entity"


@dataclass(frozen=True)
class Link:
    """One triplet of G_k seen from the tree: it puts ``entity`` under ``parent_entity``."""

    parent_entity: str
    entity: str
    triplet_id: int


@dataclass
class SemanticNode:
    """A group of entities with the same position in G_k.

    ``inverse`` is True when the node was reached by following ``relation``
    backwards: its entities are the *heads* of triplets whose tail is in the
    parent node.
    """

    id: str
    type: str
    parent: str | None = None
    relation: str | None = None
    inverse: bool = False
    depth: int = 0
    links: list[Link] = field(default_factory=list)
    root_entities: list[str] = field(default_factory=list)

    @property
    def entities(self) -> list[str]:
        if self.parent is None:
            return list(self.root_entities)
        return list(dict.fromkeys(link.entity for link in self.links))

    @property
    def relation_label(self) -> str:
        """The relation as options show it: ``directed_by`` or ``directed_by (reverse)``."""
        if self.relation is None:
            return ""
        return f"{self.relation} (reverse)" if self.inverse else self.relation

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "type": self.type,
            "parent": self.parent,
            "relation": self.relation,
            "inverse": self.inverse,
            "depth": self.depth,
            "entities": self.entities,
            "triplets": [link.triplet_id for link in self.links],
        }


class AbstractStructure:
    """S_k (nodes) together with G_k (their links), rooted at the start entity."""

    def __init__(self, root_entity: str) -> None:
        self.nodes: dict[str, SemanticNode] = {}
        self._counter = 0
        self.root_id = root_entity
        self.nodes[root_entity] = SemanticNode(
            id=root_entity, type=detect_type(root_entity), root_entities=[root_entity]
        )

    # ----------------------------------------------------------- building
    def add_node(self, parent_id: str, relation: str, inverse: bool, links: list[Link]) -> SemanticNode:
        """Add the node a search step retrieved; its type is the majority type of its entities."""
        parent = self.nodes[parent_id]
        entities = list(dict.fromkeys(link.entity for link in links))
        ntype = node_type(entities, relation)
        self._counter += 1
        node_id = f"{ntype}_{self._counter}"
        while node_id in self.nodes:  # an entity literally named "entity_3"
            node_id += "'"
        node = SemanticNode(
            id=node_id,
            type=ntype,
            parent=parent_id,
            relation=relation,
            inverse=inverse,
            depth=parent.depth + 1,
            links=list(links),
        )
        self.nodes[node_id] = node
        return node

    def copy(self) -> "AbstractStructure":
        other = AbstractStructure.__new__(AbstractStructure)
        other.nodes = {
            k: SemanticNode(
                id=n.id, type=n.type, parent=n.parent, relation=n.relation, inverse=n.inverse,
                depth=n.depth, links=list(n.links), root_entities=list(n.root_entities),
            )
            for k, n in self.nodes.items()
        }
        other._counter = self._counter
        other.root_id = self.root_id
        return other

    # ------------------------------------------------------------ reading
    @property
    def root(self) -> SemanticNode:
        return self.nodes[self.root_id]

    def __getitem__(self, node_id: str) -> SemanticNode:
        return self.nodes[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def children(self, node_id: str) -> list[SemanticNode]:
        return [n for n in self.nodes.values() if n.parent == node_id]

    def path_from_root(self, node_id: str) -> list[str]:
        """Node ids from the root down to ``node_id`` (inclusive)."""
        path = []
        current: str | None = node_id
        while current is not None:
            path.append(current)
            current = self.nodes[current].parent
        return path[::-1]

    def triplet_ids(self) -> list[int]:
        """G_k: every triplet id the structure holds, sorted."""
        return sorted({link.triplet_id for n in self.nodes.values() for link in n.links})

    def entities(self) -> set[str]:
        out: set[str] = set()
        for n in self.nodes.values():
            out.update(n.entities)
        return out

    def has_expansion(self, node_id: str, relation: str, inverse: bool) -> bool:
        return any(
            c.relation == relation and c.inverse == inverse for c in self.children(node_id)
        )

    def to_dict(self) -> dict:
        """The trace form: ``{"nodes": [{"id","type","parent","relation","entities", ...}]}``."""
        return {"nodes": [n.to_dict() for n in self.nodes.values()]}

    def linearize(self, examples: int = 2) -> str:
        """S_k as triples in the graph's own direction, then a few entities per node.

        Tab. 14 shows only the triples; ``examples`` > 0 adds a line per node
        naming some of its entities, which an untrained model needs to tell
        ``entity_1`` from ``entity_2`` (set it to 0 for the paper's prompt).
        """
        lines = []
        for n in self.nodes.values():
            if n.parent is None:
                continue
            if n.inverse:
                lines.append(f'("{n.id}", "{n.relation}", "{n.parent}")')
            else:
                lines.append(f'("{n.parent}", "{n.relation}", "{n.id}")')
        if not lines:
            lines.append(f'"{self.root_id}"')
        if examples > 0:
            shown = []
            for n in self.nodes.values():
                if n.parent is None:
                    continue
                ents = n.entities
                sample = ", ".join(ents[:examples])
                more = f" (+{len(ents) - examples} more)" if len(ents) > examples else ""
                shown.append(f"{n.id}: {sample}{more}")
            if shown:
                lines.append("Nodes:")
                lines.extend(shown)
        return "\n".join(lines)

    # ------------------------------------------------------------ pruning
    def remove_entities(self, node_id: str, entities: Iterable[str]) -> set[int]:
        """Remove entities from a node and, in cascade, everything below them.

        Returns the triplet ids that left G_k.  An entity below stays as long
        as one of its parent entities survives (several films may share one
        director).
        """
        drop = set(entities)
        node = self.nodes[node_id]
        if node.parent is None or not drop:
            return set()
        removed = self._remove_links(node_id, lambda link: link.entity in drop)
        return removed | self._cascade(node_id, drop - set(node.entities))

    def _drop_parents(self, node_id: str, gone_parents: set[str]) -> set[int]:
        """Below a removal: drop the links hanging from parent entities that are gone, and cascade."""
        if not gone_parents:
            return set()
        before = set(self.nodes[node_id].entities)
        removed = self._remove_links(node_id, lambda link: link.parent_entity in gone_parents)
        return removed | self._cascade(node_id, before - set(self.nodes[node_id].entities))

    def _remove_links(self, node_id: str, selected: Callable[[Link], bool]) -> set[int]:
        """Remove the node's `selected` links; return their triplet ids."""
        node = self.nodes[node_id]
        removed = {link.triplet_id for link in node.links if selected(link)}
        node.links = [link for link in node.links if not selected(link)]
        return removed

    def _cascade(self, node_id: str, gone: set[str]) -> set[int]:
        """The triplet ids that leave the node's children once the entities `gone` left the node."""
        removed: set[int] = set()
        for child in self.children(node_id):
            removed |= self._drop_parents(child.id, gone)
        return removed
