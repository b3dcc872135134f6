"""Local language models: packaged GGUF weights, local folders, hub ids."""

from .local_model import ContinuationScore, Generation, LocalModel, PromptState, PromptTooLongError, ScoreList
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
    "ContinuationScore", "Generation", "LocalModel", "PromptState", "PromptTooLongError", "ScoreList",
    "ModelIntegrityError", "ModelLoadError", "install_model", "load_model", "model_statuses",
    "pick_device", "pick_dtype", "DEFAULT_APP_MODEL", "PACKAGED_MODELS", "TEST_MODEL",
    "PackagedModel", "is_installed",
]
