"""Real pretrained models (no Qt): a Hugging Face folder's config.json, model.safetensors and
tokenizer.json become an editable projection session for one layer."""

from attention_explorer.pretrained.checkpoint.available import ModelEntry, models
from attention_explorer.pretrained.checkpoint.source import resolve_model
from attention_explorer.pretrained.families import SUPPORTED_TEXT
from attention_explorer.pretrained.model_errors import ModelError
from attention_explorer.pretrained.model_lookup import base_for_saving, rebuild
from attention_explorer.pretrained.open_model import LoadedModel, from_model, load_model
from attention_explorer.pretrained.overview import model_attention
from attention_explorer.pretrained.run_model import ModelRun, model_run
from attention_explorer.pretrained.sweep import (
    SweepCancelled,
    SweepResult,
    knockout_sweep,
    run_sweep,
    sweep_estimate,
)
from attention_explorer.session.model_links import ModelLookup, install_model_lookup

# Sessions saved by reference find their model through this (session/ cannot import pretrained/).
install_model_lookup(ModelLookup(rebuild=rebuild, base_for_saving=base_for_saving))

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
