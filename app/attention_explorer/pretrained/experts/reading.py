"""A routed layer's expert tensors read through the family's experts plan: the router, every
expert's gate, up and down projections (per expert, as Hub checkpoints and transformers'
``save_pretrained`` store them, or fused 3-D as gpt-oss's files and transformers' memory
hold them), and shared experts. Everything comes in math orientation (``y = x W + b``):
``W_experts_gate [E, d, f]``, ``W_experts_out [E, f, d]``.

A tensor the config rules out (a bias the plan has none of, a dense MLP in a routed layer, a
router in a dense one) is refused by name, as the record's other tensors are.
"""

from __future__ import annotations

import numpy as np

from attention_explorer.pretrained.experts.plan import ExpertsPlan
from attention_explorer.pretrained.model_errors import ModelError


def _find(r, name: str) -> str | None:
    return r.t.find(name, r.arch.prefixes)


def _present_refused(r, stored: str, why: str) -> ModelError:
    return ModelError(
        "files",
        f"{r.t.describe()}: tensor {stored} is present, but {why} (transformers would drop "
        "it): the weights do not match the config",
    )


def _linear(r, name: str, d_in: int, d_out: int, bias: bool):
    """(W [in, out], b [out] or None) of the ``nn.Linear`` module ``name``; a bias present
    against ``bias`` (or missing under it) is refused naming the tensor."""
    w = r.get(name + ".weight", shape=(d_out, d_in)).T  # [in, out]
    stored = _find(r, name + ".bias")
    if stored is not None and not bias:
        raise _present_refused(r, stored, f"{r.arch.label} have no bias there")
    if bias and stored is None:
        raise ModelError("files", f"{r.t.describe()} has no tensor {name}.bias")
    return w, (r.get(name + ".bias", shape=(d_out,)) if bias else None)


def _stack(r, arrays: list, shape: tuple):
    """The experts' arrays as one ``[E, ...]`` array (a stand-in when only surveying)."""
    if r.dry:
        return np.broadcast_to(np.zeros((), r.dtype), shape)
    return np.ascontiguousarray(np.stack(arrays))


def _per_expert(r, plan: ExpertsPlan, i: int, E: int, d: int, f: int) -> dict:
    """The experts stored one module each (``mlp.experts.{j}.gate_proj``…)."""
    parts: dict[str, list] = {"gate": [], "in": [], "out": [], "bg": [], "bi": [], "bo": []}
    for j in range(E):
        for role, key, bkey, d_in, d_out in (
            ("expert_gate", "gate", "bg", d, f),
            ("expert_up", "in", "bi", d, f),
            ("expert_down", "out", "bo", f, d),
        ):
            W, b = _linear(r, plan.tensors[role].format(i=i, j=j), d_in, d_out, plan.expert_bias)
            parts[key].append(W)
            parts[bkey].append(b)
    bias = plan.expert_bias
    return {
        "W_experts_gate": _stack(r, parts["gate"], (E, d, f)),
        "W_experts_in": _stack(r, parts["in"], (E, d, f)),
        "W_experts_out": _stack(r, parts["out"], (E, f, d)),
        "b_experts_gate": _stack(r, parts["bg"], (E, f)) if bias else None,
        "b_experts_in": _stack(r, parts["bi"], (E, f)) if bias else None,
        "b_experts_out": _stack(r, parts["bo"], (E, d)) if bias else None,
    }


def _contiguous(r, a):
    return a if r.dry else np.ascontiguousarray(a)


def _fused(r, plan: ExpertsPlan, i: int, E: int, d: int, f: int) -> dict:
    """The experts stored as two 3-D tensors (``experts.gate_up_proj``, ``experts.down_proj``,
    with ``_bias`` tensors where the plan has biases), split into gate and up."""
    in_out = plan.fused_orientation == "in_out"
    up_name, down_name = (plan.tensors[k].format(i=i) for k in ("experts_gate_up", "experts_down"))
    gate_up = r.get(up_name, shape=(E, d, 2 * f) if in_out else (E, 2 * f, d))
    down = r.get(down_name, shape=(E, f, d) if in_out else (E, d, f))
    if not in_out:
        gate_up, down = gate_up.transpose(0, 2, 1), down.transpose(0, 2, 1)  # [E, d, 2f], [E, f, d]
    pick = (np.s_[..., 0::2], np.s_[..., 1::2])  # interleaved: gate at even outputs
    if plan.fused_layout == "blocks":
        pick = (np.s_[..., :f], np.s_[..., f:])
    parts = {
        "W_experts_gate": _contiguous(r, gate_up[pick[0]]),  # [E, d, f]
        "W_experts_in": _contiguous(r, gate_up[pick[1]]),  # [E, d, f]
        "W_experts_out": _contiguous(r, down),  # [E, f, d]
    }
    for name in (up_name, down_name):
        stored = _find(r, name + "_bias")
        if stored is not None and not plan.expert_bias:
            raise _present_refused(r, stored, f"{r.arch.label} have no expert biases")
    if plan.expert_bias:
        b_up = r.get(up_name + "_bias", shape=(E, 2 * f))  # [E, 2f]
        parts["b_experts_gate"] = _contiguous(r, b_up[pick[0]])
        parts["b_experts_in"] = _contiguous(r, b_up[pick[1]])
        parts["b_experts_out"] = r.get(down_name + "_bias", shape=(E, d))  # [E, d]
    return parts


def expert_weights(r, i: int, d: int) -> dict:
    """The LayerWeights fields of routed layer ``i`` (``r`` a RoleReader with the checked
    config): router, experts (per-expert or fused layout, whichever the file holds) and shared
    experts. A dense MLP tensor in the layer is refused by name."""
    plan: ExpertsPlan = r.arch.experts
    config = r.config
    E, f, shared = plan.count(config), plan.width(config), plan.shared(config)
    dense = r.name("ffn_in", i)
    if dense is not None and _find(r, dense + ".weight") is not None:
        raise _present_refused(r, _find(r, dense + ".weight"), f"layer {i} routes to experts")
    W_router, b_router = _linear(r, plan.tensors["router"].format(i=i), d, E, plan.router_bias)
    parts = {"W_router": _contiguous(r, W_router), "b_router": b_router}
    if "router_score_bias" in plan.tensors:
        parts["router_score_bias"] = r.get(plan.tensors["router_score_bias"].format(i=i), (E,))
    first = plan.tensors.get("expert_gate")
    if first is not None and _find(r, first.format(i=i, j=0) + ".weight") is not None:
        parts.update(_per_expert(r, plan, i, E, d, f))
    elif "experts_gate_up" in plan.tensors and _find(
        r, plan.tensors["experts_gate_up"].format(i=i)
    ):
        parts.update(_fused(r, plan, i, E, d, f))
    else:
        wanted = first.format(i=i, j=0) + ".weight" if first else plan.tensors["experts_gate_up"]
        raise ModelError("files", f"{r.t.describe()} has no tensor {wanted.format(i=i)}")
    if shared:
        for role, key, d_in, d_out in (
            ("shared_gate", "W_shared_gate", d, shared * f),
            ("shared_up", "W_shared_in", d, shared * f),
            ("shared_down", "W_shared_out", shared * f, d),
        ):
            parts[key] = _contiguous(
                r, _linear(r, plan.tensors[role].format(i=i), d_in, d_out, False)[0]
            )
    return parts


def dense_layer_check(r, i: int) -> None:
    """A dense layer of a model with experts holds no router (else it is refused by name)."""
    plan: ExpertsPlan = r.arch.experts
    stored = _find(r, plan.tensors["router"].format(i=i) + ".weight")
    if stored is not None:
        raise _present_refused(r, stored, f"config.json makes layer {i} a dense feed-forward")
