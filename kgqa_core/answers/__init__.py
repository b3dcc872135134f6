"""What happens to a method's answers after the model wrote them (completion from the graph)."""

from .completion import (
    MAX_COMPLETED_ANSWERS,
    Completion,
    complete_along_path,
    complete_from_chain,
    complete_from_last_triplet,
)

__all__ = ["MAX_COMPLETED_ANSWERS", "Completion", "complete_along_path", "complete_from_chain",
           "complete_from_last_triplet"]
