"""Evaluation: datasets, metrics, the READS error taxonomy and the batch runner."""

from .dataset import Dataset, DatasetFormatError, EvalQuestion, LineProblem, load_dataset, parse_dataset, write_dataset
from .metrics import (
    Estimate,
    GroupSummary,
    QuestionMetrics,
    bootstrap,
    normalize_answer,
    question_metrics,
    score_answers,
    summarize,
    triplet_prf,
)
from .taxonomy import ERROR_CLASS_DESCRIPTIONS, classify_error, classify_result, retrieved_entities

__all__ = [
    "Dataset", "DatasetFormatError", "EvalQuestion", "LineProblem", "load_dataset", "parse_dataset",
    "write_dataset", "Estimate", "GroupSummary", "QuestionMetrics", "bootstrap", "normalize_answer",
    "question_metrics", "score_answers", "summarize", "triplet_prf", "ERROR_CLASS_DESCRIPTIONS",
    "classify_error", "classify_result", "retrieved_entities",
]
