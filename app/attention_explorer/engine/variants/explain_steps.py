"""The explain builders of the newer attention stages: QK-norm (``Q_normed``, ``K_normed``)
and the soft cap (``capped``), and which q and k the scores read.

Every number is read from the trace (the stage before, the weights, the config); the steps
only write out the arithmetic that made the cell.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.core.numbers import format_number
from attention_explorer.engine.explain_parts import Step, first_terms
from attention_explorer.engine.variants.qk_norm import norm_gamma


def scored_stage(trace, name: str) -> str:
    """The stage of ``name`` ("Q" or "K") that the scores read: rotated under RoPE, normed
    under QK-norm, else as projected or typed."""
    for stage in (f"{name}_rot", f"{name}_normed"):
        if trace.has(stage):
            return stage
    return name


def rotation_source(trace, name: str) -> str:
    """The stage RoPE turned into ``name`` ("Q_rot" or "K_rot"): the normed q or k under
    QK-norm, else Q or K."""
    source = name.removesuffix("_rot")
    return f"{source}_normed" if trace.has(f"{source}_normed") else source


def _weight_index(config, source: str, head: int, j: int) -> int:
    """Where dimension ``j`` of ``head``'s q (``source`` "Q") or k ("K") sits in the weights:
    ``j`` per head, else in the head's block of the all-heads vector."""
    if config.qk_norm_width == "head":
        return j
    width_head = head if source == "Q" else config.kv_head_of(head)
    return width_head * config.head_dim + j


def qk_norm_steps(name: str):
    """The builder of ``Q_normed``/``K_normed``: the row's mean square, its root, and the
    cell divided by it times its weight (w, or 1 + w)."""
    source = name.removesuffix("_normed")

    def build(trace, head, i, j, limit):
        config, inputs = trace.config, trace.inputs
        label = trace.row_labels(name)[i]
        eps = float(config.qk_norm_eps)
        if config.qk_norm_width == "head":
            row = np.asarray(trace.stage(source, head)[i], dtype=np.float64)  # [d_k]
            over = f"the {row.size} numbers of {source} row “{label}” of head {head}"
        else:  # every head's row of this token (the key heads once each)
            stage = np.asarray(trace[source], dtype=np.float64)  # [h, rows, d_k]
            group = 1 if source == "Q" else config.kv_group
            row = stage[::group, i].reshape(-1)  # [heads*d_k]
            over = f"the {row.size} numbers of every head's {source} row “{label}”"
        squares, hidden = first_terms(
            lambda t: f"{source}[{t}]² = ({format_number(row[t])})²", row * row, limit
        )
        mean_square = float(np.mean(row * row))
        root = float(np.sqrt(mean_square + eps))
        weights = getattr(inputs, "q_norm" if source == "Q" else "k_norm")
        at = _weight_index(config, source, head, j)
        w = float(np.asarray(weights, dtype=np.float64)[at])
        gamma = float(norm_gamma(config, np.array([w]))[0])
        x = float(np.asarray(trace.stage(source, head)[i], dtype=np.float64)[j])
        weight_name = f"{source.lower()}_norm[{at}]"
        factor = f"(1 + {weight_name})" if config.qk_norm == "rms_one_plus" else weight_name
        return [
            Step(f"mean of the squares over {over}", squares, mean_square, hidden_terms=hidden),
            Step(
                f"rms = sqrt(mean + eps) = sqrt({format_number(mean_square)} + {eps:g})",
                [],
                root,
            ),
            Step(
                f"{name}[{label}, {j}] = {source}[{j}] / rms × {factor}",
                [(f"{source}[{j}]", x), ("rms", root), (factor, gamma)],
                float(trace.stage(name, head)[i, j]),
                formula=f"{format_number(x)} / {format_number(root)} × {format_number(gamma)}",
            ),
        ]

    return build


def softcap_steps(scaled_steps):
    """The builder of ``capped``: the scaled score (``scaled_steps``' arithmetic), then
    cap · tanh(scaled / cap) with the numbers."""

    def build(trace, head, i, j, limit):
        steps = scaled_steps(trace, head, i, j, limit)
        cap = float(trace.config.softcap)
        scaled = float(trace.stage("scaled", head)[i, j])
        ratio = scaled / cap
        steps.append(
            Step(
                f"capped = cap · tanh(scaled / cap) = {format_number(cap)} · tanh("
                f"{format_number(scaled)} / {format_number(cap)})",
                [("scaled / cap", ratio), ("tanh(scaled / cap)", float(np.tanh(ratio)))],
                float(trace.stage("capped", head)[i, j]),
                formula=f"no score goes beyond ±{format_number(cap)}; small ones barely move",
            )
        )
        return steps

    return build
