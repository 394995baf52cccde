"""Real pretrained models (no Qt): a Hugging Face folder's config.json, model.safetensors and
tokenizer.json become an editable projection session for one layer."""

from attention_explorer.models.api import LoadedModel, from_model, load_model, model_attention
from attention_explorer.models.errors import ModelError
from attention_explorer.models.families import SUPPORTED_TEXT
from attention_explorer.models.source import resolve_model

__all__ = [
    "SUPPORTED_TEXT",
    "LoadedModel",
    "ModelError",
    "from_model",
    "load_model",
    "model_attention",
    "resolve_model",
]
