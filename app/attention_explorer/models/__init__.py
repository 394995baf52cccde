"""Real pretrained models (no Qt): a Hugging Face folder's config.json, model.safetensors and
tokenizer.json become an editable projection session for one layer."""

import sys
import types

from attention_explorer.models.api import LoadedModel, from_model, load_model, model_attention
from attention_explorer.models.available import ModelEntry, models
from attention_explorer.models.errors import ModelError
from attention_explorer.models.families import SUPPORTED_TEXT
from attention_explorer.models.run import ModelRun, model_run
from attention_explorer.models.source import resolve_model
from attention_explorer.models.sweep import (
    SweepCancelled,
    SweepResult,
    knockout_sweep,
    run_sweep,
    sweep_estimate,
)

__all__ = [
    "SUPPORTED_TEXT",
    "SweepCancelled",
    "SweepResult",
    "LoadedModel",
    "ModelEntry",
    "ModelError",
    "ModelRun",
    "from_model",
    "knockout_sweep",
    "load_model",
    "model_attention",
    "model_run",
    "models",
    "resolve_model",
    "run_sweep",
    "sweep_estimate",
]


class _CallablePackage(types.ModuleType):
    """This package, callable as :func:`models`.

    ``ae.models()`` is the API function that lists the models available offline, and
    ``attention_explorer.models`` is this package: importing a sub-package sets the parent's
    attribute of the same name, so whichever ``ae.models`` ends up being, it answers the call.
    """

    def __call__(self, folders=()):
        """``ae.models(folders)``: see :func:`attention_explorer.models.available.models`."""
        return models(folders)


sys.modules[__name__].__class__ = _CallablePackage
