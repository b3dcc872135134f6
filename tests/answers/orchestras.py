"""A small graph of orchestras, their musicians, nationalities and instruments: questions that name two entities."""

from kgqa_core.graph.knowledge_graph import KnowledgeGraph

TRIPLETS = [
    ("Ann Berg", "member_of", "Oslo Philharmonic"), ("Bo Lind", "member_of", "Oslo Philharmonic"),
    ("Cy Rossi", "member_of", "Oslo Philharmonic"), ("Di Sato", "member_of", "Tokyo Symphony"),
    ("Ann Berg", "nationality", "Italy"), ("Di Sato", "nationality", "Italy"), ("Ed Moro", "nationality", "Italy"),
    ("Bo Lind", "nationality", "Sweden"), ("Cy Rossi", "plays", "oboe"), ("Ann Berg", "plays", "oboe"),
    ("Oslo Philharmonic", "based_in", "Oslo"),
]
GRAPH = KnowledgeGraph.from_triplets(TRIPLETS, name="orchestras")
