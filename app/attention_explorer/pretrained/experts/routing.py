"""The routing rules: from router logits ``[n, E]`` to each token's chosen experts
``[n, k]`` and their weights ``[n, k]``, on numpy arrays or torch tensors alike, as
transformers 5.24's routers compute them (in the logits' dtype):

- ``softmax_topk`` (``Qwen3MoeTopKRouter``, ``OlmoeTopKRouter``): softmax over all experts,
  the k largest, divided by their sum iff ``norm_topk_prob``;
- ``topk_softmax`` (``GptOssTopKRouter``): the k largest logits, softmax over those k;
- ``sigmoid_grouped`` (``DeepseekV3TopkRouter``): sigmoid scores; the choice ranks
  ``scores + e_score_correction_bias`` within the ``topk_group`` best of ``n_group`` groups
  (a group scores the sum of its top two); the weights are the chosen *scores* (without the
  bias), divided by their sum + 1e-20 iff ``norm_topk_prob``, times
  ``routed_scaling_factor``.

Each token's experts come sorted by weight, largest first (transformers' order within the
k does not change the sum).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attention_explorer.kernels import ops_for
from attention_explorer.pretrained.experts.plan import ExpertsPlan


def is_numpy(x) -> bool:
    """Whether ``x`` is a numpy array (else a torch tensor)."""
    return isinstance(x, np.ndarray)


def top_k(x, k: int):
    """(values ``[n, k]``, indices ``[n, k]``) of each row's k largest, largest first."""
    if is_numpy(x):
        idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]  # [n, k]
        return np.take_along_axis(x, idx, axis=-1), idx
    values, idx = x.topk(k, dim=-1)
    return values, idx


def _softmax(x):
    """Softmax over the last axis in ``x``'s dtype: the kernels' (max-shifted on numpy)."""
    return ops_for(x).softmax(x)  # [n, m]


def _sigmoid(x):
    """Each score's sigmoid: the kernels' (overflow-free on torch)."""
    return ops_for(x).sigmoid(x)  # [n, m]


def _gather(x, idx):
    return np.take_along_axis(x, idx, axis=-1) if is_numpy(x) else x.gather(-1, idx)


def _sort_by_weight(weights, idx):
    """Each row's (weights, experts) with the largest weight first."""
    order = top_k(weights, weights.shape[-1])[1]  # [n, k]
    return _gather(weights, order), _gather(idx, order)


def softmax_topk(logits, k: int, norm: bool):
    """Qwen3-MoE/OLMoE: (weights ``[n, k]``, experts ``[n, k]``)."""
    weights, idx = top_k(_softmax(logits), k)  # [n, k]
    if norm:
        weights = weights / weights.sum(axis=-1, keepdims=True)  # [n, k]
    return weights, idx


def topk_softmax(logits, k: int):
    """gpt-oss: (weights ``[n, k]``, experts ``[n, k]``)."""
    values, idx = top_k(logits, k)  # [n, k]
    return _softmax(values), idx


def sigmoid_grouped(logits, k: int, score_bias, groups: int, keep: int, norm: bool, scale: float):
    """DeepSeek-V3: (weights ``[n, k]``, experts ``[n, k]``)."""
    n, E = logits.shape
    scores = _sigmoid(logits)  # [n, E]
    choice = scores if score_bias is None else scores + score_bias  # [n, E]
    grouped = choice.reshape(n, groups, E // groups)  # [n, G, E/G]
    if is_numpy(grouped):
        best_two = -np.sort(-grouped, axis=-1)[..., :2]  # [n, G, 2]
    else:
        best_two = grouped.topk(2, dim=-1)[0]
    group_scores = best_two.sum(axis=-1) if is_numpy(best_two) else best_two.sum(dim=-1)  # [n, G]
    kept = top_k(group_scores, keep)[1]  # [n, keep]
    if is_numpy(choice):
        allowed = np.zeros((n, groups), dtype=bool)  # [n, G]
        np.put_along_axis(allowed, kept, True, axis=-1)
        allowed = np.repeat(allowed, E // groups, axis=-1)  # [n, E]
        masked = np.where(allowed, choice, -np.inf)  # [n, E]
    else:
        import torch

        allowed = torch.zeros((n, groups), dtype=torch.bool, device=choice.device)
        allowed.scatter_(1, kept, True)
        allowed = allowed.repeat_interleave(E // groups, dim=-1)  # [n, E]
        masked = choice.masked_fill(~allowed, float("-inf"))
    idx = top_k(masked, k)[1]  # [n, k]
    weights = _gather(scores, idx)  # [n, k] the scores without the bias
    if norm:
        weights = weights / (weights.sum(axis=-1, keepdims=True) + 1e-20)
    return weights * scale, idx


def route(plan: ExpertsPlan, config: Mapping, logits, score_bias=None):
    """The plan's rule on router ``logits [n, E]``: (weights ``[n, k]``, experts ``[n, k]``),
    each row's largest weight first."""
    k = plan.top_k(config)
    if plan.rule == "softmax_topk":
        weights, idx = softmax_topk(logits, k, bool(plan.get(config, "norm_topk_prob")))
    elif plan.rule == "topk_softmax":
        weights, idx = topk_softmax(logits, k)
    else:
        weights, idx = sigmoid_grouped(
            logits,
            k,
            score_bias,
            int(plan.get(config, "n_group")),
            int(plan.get(config, "topk_group")),
            bool(plan.get(config, "norm_topk_prob")),
            float(plan.get(config, "routed_scaling_factor")),
        )
    return _sort_by_weight(weights, idx)
