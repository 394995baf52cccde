"""Benchmarks and the self-test: ways to check the app, kept apart from its public API.

``python -m attention_explorer.diagnostics.bench`` (engine), ``python -m
attention_explorer.diagnostics.bench_gui`` (edit to repaint in the real window) and
``attention-explorer --self-test`` (:mod:`.self_test`).
"""
