"""Families with a mixture-of-experts feed-forward (Qwen3-MoE, OLMoE): registered like the
files of ``families/`` (the registry reads this folder's modules too), kept here so that
folder stays within the project's 20 files."""
