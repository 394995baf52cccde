"""The experts plan's config checks: every key that changes the numbers is implemented or
refused by name (:func:`check_experts`), run with the record's own checks at load time."""

from __future__ import annotations

import math
from collections.abc import Mapping

from attention_explorer.pretrained.experts.plan import EXPERT_KINDS, RULES, ExpertsPlan
from attention_explorer.pretrained.model_errors import ModelError


def _refuse(label: str, text: str) -> ModelError:
    return ModelError(
        "config", f"config.json {text}, which {label} support here does not implement"
    )


def _number(plan: ExpertsPlan, config: Mapping, key: str) -> float:
    value = plan.get(config, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ModelError("config", f"config.json sets {key} {value!r}; expected a finite number")
    return float(value)


def check_experts(plan: ExpertsPlan, config: Mapping, label: str, layers: int) -> None:
    """Refuse (ModelError naming the key) a config the plan does not implement: a refused key
    present (a quantization), a value outside ``accepted``, sizes that cannot route (top-k
    above the experts; DeepSeek-V3's groups that do not divide them or leave too few)."""
    if plan.rule not in RULES or plan.kind not in EXPERT_KINDS:
        raise ModelError("config", f"{label}: unknown experts rule {plan.rule!r}/{plan.kind!r}")
    for key, why in plan.refused.items():
        if config.get(key) is not None:
            raise ModelError("config", f"config.json sets {key}: {label}: {why}")
    for key, values in plan.accepted.items():
        if key in config and config[key] is not None and config[key] not in values:
            shown = " or ".join(repr(v) for v in values)
            raise _refuse(label, f"sets {key} {config[key]!r} (only {shown} is implemented)")
    if not any(plan.is_sparse(config, i) for i in range(layers)):
        return  # no routed layer: the plan's sizes are not read
    count, k = plan.count(config), plan.top_k(config)
    plan.width(config)
    plan.shared(config)
    if k > count:
        raise ModelError(
            "config", f"config.json routes each token to {plan.top_k_key}={k} of {count} experts"
        )
    if plan.kind == "clamped_swiglu":
        _number(plan, config, "swiglu_limit"), _number(plan, config, "swiglu_alpha")
    if plan.rule == "sigmoid_grouped":
        _check_groups(plan, config, count, k)


def _check_groups(plan: ExpertsPlan, config: Mapping, count: int, k: int) -> None:
    """DeepSeek-V3's group-limited choice: ``n_group`` divides the experts, each group has two
    (a group's score is its top two), ``topk_group`` groups hold at least ``k`` experts."""
    groups = plan.get(config, "n_group")
    chosen = plan.get(config, "topk_group")
    for key, value in (("n_group", groups), ("topk_group", chosen)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ModelError(
                "config", f"config.json sets {key} {value!r}; expected an integer >= 1"
            )
    if count % groups or count // groups < 2:
        raise ModelError(
            "config",
            f"config.json sets n_group {groups} for {count} experts: groups must divide the "
            "experts and hold two each",
        )
    if chosen > groups or chosen * (count // groups) < k:
        raise ModelError(
            "config",
            f"config.json sets topk_group {chosen} of n_group {groups}: too few experts for "
            f"{plan.top_k_key}={k}",
        )
    _number(plan, config, "routed_scaling_factor")
