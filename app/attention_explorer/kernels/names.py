"""The names every array library's namespace provides, written once.

:mod:`.numpy_ops` and :mod:`.torch_ops` each define every name of :data:`PRIMITIVES` (their
``__all__`` is this tuple), and build their :data:`ACTIVATIONS` table from
:data:`ACTIVATION_PRIMITIVES`; ``tests/kernels/test_primitives_parity.py`` checks both.
"""

from __future__ import annotations

from types import MappingProxyType

#: The primitives (and the tables of them) that each namespace defines.
PRIMITIVES = (
    "ACTIVATIONS",
    "NORMALIZERS",
    "NORMS",
    "all_finite",
    "attention",
    "blocked_keys",
    "causal_mask",
    "combine",
    "gelu",
    "gelu_fast",
    "gelu_tanh",
    "knock_out",
    "layer_norm",
    "linear",
    "linear_split",
    "logits",
    "mask_scores",
    "merge_heads",
    "normalize",
    "padding_mask",
    "quick_gelu",
    "relu",
    "repeat_kv",
    "rms_norm",
    "rotate",
    "rotate_half",
    "rotation_tables",
    "scale",
    "scaled_score",
    "score",
    "scores_bounded",
    "sigmoid",
    "silu",
    "softmax",
    "sparsemax",
    "split_heads",
    "window_mask",
)

#: Every activation name a config may give, as transformers' ACT2FN spells them -> the
#: primitive that computes it.
ACTIVATION_PRIMITIVES = MappingProxyType(
    {
        "gelu": "gelu",
        "gelu_new": "gelu_tanh",
        "gelu_pytorch_tanh": "gelu_tanh",
        "gelu_fast": "gelu_fast",
        "quick_gelu": "quick_gelu",
        "relu": "relu",
        "silu": "silu",
        "swish": "silu",
    }
)
