"""Traces: the typed, JSON-serialisable record of what a method did."""

from .schema import (
    SCHEMA_VERSION,
    Answer,
    Candidate,
    ChainTriplet,
    FaithfulnessReport,
    ModelCall,
    Step,
    TokenOption,
    TokenPosition,
    Trace,
    TraceFormatError,
    load_trace,
    save_trace,
)
from .validate import dataclass_from_json

__all__ = [
    "SCHEMA_VERSION", "Answer", "Candidate", "ChainTriplet", "FaithfulnessReport", "ModelCall",
    "Step", "TokenOption", "TokenPosition", "Trace", "TraceFormatError", "load_trace", "save_trace",
    "dataclass_from_json",
]
