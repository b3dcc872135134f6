"""Local language models: packaged GGUF weights, local folders, hub ids."""

from .backends import BACKENDS, default_backend
from .interface import (
    BackendCapabilityError,
    ContinuationScore,
    Generation,
    LanguageModel,
    PromptTooLongError,
    ScoreList,
    Sequence,
)
from .local_model import LocalModel, PromptState, TransformersModel
from .manager import (
    ModelIntegrityError,
    ModelLoadError,
    install_model,
    load_model,
    model_statuses,
    pick_device,
    pick_dtype,
)
from .registry import DEFAULT_APP_MODEL, PACKAGED_MODELS, TEST_MODEL, PackagedModel, is_installed

__all__ = [
    "BACKENDS", "default_backend", "BackendCapabilityError", "LanguageModel", "Sequence", "TransformersModel",
    "ContinuationScore", "Generation", "LocalModel", "PromptState", "PromptTooLongError", "ScoreList",
    "ModelIntegrityError", "ModelLoadError", "install_model", "load_model", "model_statuses",
    "pick_device", "pick_dtype", "DEFAULT_APP_MODEL", "PACKAGED_MODELS", "TEST_MODEL",
    "PackagedModel", "is_installed",
]
