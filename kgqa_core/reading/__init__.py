"""Question reading: what a question asks of the graph, read from the graph, the model and the user's words.

One `QuestionReading` per question (`reading.py`), produced by a
`QuestionReader` (`readers.py`: ``paths``, ``lexicon``, ``wording``,
``none``); `guidance.py` turns a reading into the pieces each method layers
on its paper's algorithm.
"""

from .reading import MAX_HOPS, PlanHop, QuestionReader, QuestionReading, RelationPlan
from .vocabulary import RelationVocabulary, VocabularyError

__all__ = ["MAX_HOPS", "PlanHop", "QuestionReader", "QuestionReading", "RelationPlan", "RelationVocabulary",
           "VocabularyError"]
