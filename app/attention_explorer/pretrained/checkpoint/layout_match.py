"""Which family's layout a checkpoint's tensors follow, for the message when a tensor the
config's family needs is missing: RoBERTa weights saved with ``model_type: bert`` lack
``embeddings.word_embeddings.weight`` because every name is under ``roberta.``, and Phi-3
weights labelled ``llama`` lack ``q_proj`` because Phi-3 fuses it into ``qkv_proj``. Saying
that one tensor is missing hides what is wrong; naming the family whose layout the tensors
follow says it (and what model_type to set, if that is what they are).

A family matches when its word table and the weights of layer 0's attention, norms and
feed-forward (every such role its record names) are all in the file under its prefixes.
"""

from __future__ import annotations

from attention_explorer.pretrained.architecture import Architecture
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile

#: The layer-0 roles checked (those a record names), each stored as ``<name>.weight``.
_LAYER_ROLES = ("q", "k", "v", "qkv", "o", "attn_norm", "ffn_in", "ffn_gate", "ffn_gate_up")


def _found(arch: Architecture, tensors: TensorFile) -> list[str] | None:
    """The stored names of ``arch``'s word table and layer-0 weights, or None when one is
    missing."""
    names = [arch.tensors["word"]] if "word" in arch.tensors else []
    names += [
        arch.tensors[role].format(i=0) + ".weight" for role in _LAYER_ROLES if role in arch.tensors
    ]
    found = [tensors.find(name, arch.prefixes) for name in names]
    return None if not found or None in found else found


def other_layout(arch: Architecture, tensors: TensorFile) -> str:
    """A sentence naming the family whose layout ``tensors`` follow when it is not
    ``arch``'s, else ""."""
    from attention_explorer.pretrained.families import FAMILIES

    for other in FAMILIES.values():
        if other.family == arch.family:
            continue
        found = _found(other, tensors)
        if found is not None:
            return (
                f"the tensors follow the {other.label} layout (e.g. {found[0]}, {found[-1]}), "
                f"not that of {arch.label}: config.json's model_type does not match the weights; "
                f"set it to {other.model_types[0]!r} if that is what they are"
            )
    return ""
