"""Every tensor of a checkpoint checked against its config.json before anything runs: a
tensor whose shape does not match is a ModelError naming the tensor (as the checkpoint names
it), the shape expected from the config and the shape found.

Shapes are compared as the checkpoint stores them: ``[out, in]`` for ``nn.Linear`` weights,
``[in, out]`` for GPT-2's ``Conv1D``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attention_explorer.models.errors import ModelError

#: (field of LayerWeights, role, suffix, expected math shape from the sizes)
_LAYER = (
    ("W_Q", "q", "weight", lambda s: (s["d"], s["q"])),
    ("b_Q", "q", "bias", lambda s: (s["q"],)),
    ("W_K", "k", "weight", lambda s: (s["d"], s["kv"])),
    ("b_K", "k", "bias", lambda s: (s["kv"],)),
    ("W_V", "v", "weight", lambda s: (s["d"], s["kv"])),
    ("b_V", "v", "bias", lambda s: (s["kv"],)),
    ("W_O", "o", "weight", lambda s: (s["q"], s["d"])),
    ("b_O", "o", "bias", lambda s: (s["d"],)),
    ("W_in", "ffn_in", "weight", lambda s: (s["d"], s["ff"])),
    ("b_in", "ffn_in", "bias", lambda s: (s["ff"],)),
    ("W_gate", "ffn_gate", "weight", lambda s: (s["d"], s["ff"])),
    ("b_gate", "ffn_gate", "bias", lambda s: (s["ff"],)),
    ("W_out", "ffn_out", "weight", lambda s: (s["ff"], s["d"])),
    ("b_out", "ffn_out", "bias", lambda s: (s["d"],)),
)


def _mismatch(name: str, expected: tuple, found: tuple) -> ModelError:
    return ModelError(
        "files",
        f"the tensor {name} has shape {list(found)}, but config.json needs "
        f"{list(expected)}: the weights do not belong to this config",
    )


def _stored(shape: tuple, linear: bool, layout: str) -> tuple:
    """A math-orientation ``[in, out]`` shape as the checkpoint stores it."""
    return tuple(reversed(shape)) if linear and layout == "out_in" else tuple(shape)


def check_shapes(w, name_of: Callable[[str, int | None], str], d_ff: int | None) -> None:
    """Raise a ModelError for the first tensor of ``w`` (a ModelWeights) whose shape does not
    match the config's sizes. ``name_of(role, layer)`` gives a role's checkpoint name;
    ``d_ff`` is the config's feed-forward width (None: taken from layer 0)."""
    layout = w.arch.linear_layout
    sizes = {
        "d": w.d_model,
        "q": w.heads * w.d_k,
        "kv": w.kv_heads * w.d_k,
        "ff": d_ff or int(w.layers[0].W_in.shape[1]),
    }
    fused = "qkv" in w.arch.tensors

    def check(array, name, expected, linear) -> None:
        if array is not None and tuple(np.shape(array)) != tuple(expected):
            found = _stored(tuple(np.shape(array)), linear, layout)
            raise _mismatch(name, _stored(expected, linear, layout), found)

    if fused:  # GPT-2's c_attn: Q, K and V side by side
        width = sizes["q"] + 2 * sizes["kv"]
        for i, lw in enumerate(w.layers):
            found = (lw.W_Q.shape[0], lw.W_Q.shape[1] + lw.W_K.shape[1] + lw.W_V.shape[1])
            check(np.empty(found), f"{name_of('qkv', i)}.weight", (sizes["d"], width), True)
    for i, lw in enumerate(w.layers):
        for field, role, suffix, shape in _LAYER:
            if fused and role in ("q", "k", "v"):
                continue
            linear = suffix == "weight"
            check(getattr(lw, field), f"{name_of(role, i)}.{suffix}", shape(sizes), linear)
        for role, pair in (("attn_norm", lw.ln_attn), ("ffn_norm", lw.ln_ffn)):
            check(pair[0], f"{name_of(role, i)}.weight", (sizes["d"],), False)
    vocab = w.arch.size(w.config, "vocab") or w.vocab
    check(w.word, name_of("word", None), (vocab, sizes["d"]), False)
    if w.head is not None and w.head.kind == "lm":
        check(w.head.decoder, name_of("lm_head", None), (vocab, sizes["d"]), False)
        if w.head.norm is not None:
            check(w.head.norm[0], f"{name_of('final_norm', None)}.weight", (sizes["d"],), False)
