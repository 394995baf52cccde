"""Real pretrained models (no Qt): a Hugging Face folder's config.json, model.safetensors and
tokenizer.json become an editable projection session for one layer."""

from attention_explorer.pretrained.api import LoadedModel, from_model, load_model
from attention_explorer.pretrained.available import ModelEntry, models
from attention_explorer.pretrained.errors import ModelError
from attention_explorer.pretrained.families import SUPPORTED_TEXT
from attention_explorer.pretrained.overview import model_attention
from attention_explorer.pretrained.run import ModelRun, model_run
from attention_explorer.pretrained.source import resolve_model
from attention_explorer.pretrained.sweep import (
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
