"""What happens to a method's answers after the model wrote them (mapped to the chain's entities, completed from the graph)."""

from .chain_entities import ChainMatch, answer_label, chain_entities_of, map_to_chain, repeats_question
from .completion import (
    MAX_COMPLETED_ANSWERS,
    Completion,
    complete_along_path,
    complete_from_chain,
    complete_from_last_triplet,
)

__all__ = ["MAX_COMPLETED_ANSWERS", "ChainMatch", "Completion", "answer_label", "chain_entities_of",
           "complete_along_path", "complete_from_chain", "complete_from_last_triplet", "map_to_chain",
           "repeats_question"]
