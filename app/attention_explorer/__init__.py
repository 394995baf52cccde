"""Attention Explorer: edit every number of self-attention and watch every stage change."""

from attention_explorer._version import __version__

__all__ = ["__version__"]
