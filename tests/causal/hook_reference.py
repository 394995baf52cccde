"""The causal tools' reference: transformers' own model in float64 (the exact reference's
float32 steps patched to float64, tests/models/exact_reference.py), with forward hooks that
read and overwrite activations as TransformerLens' hooks do.

Sites, in transformers' modules: ``resid_pre`` the input of block l (``transformer.h[l]`` /
``model.layers[l]``); ``attn_out`` the attention module's output (after c_proj / o_proj and
its bias); ``head_out`` the head's columns of c_proj's / o_proj's input; ``pattern`` the
eager attention function's weights (its output recomputed from the patched weights).
"""

from __future__ import annotations

import contextlib
import importlib
from dataclasses import dataclass

import numpy as np
import torch

from tests.models.exact_reference import exact_float64, load_float64


@dataclass
class Captured:
    """One run's activations: resid [layers] of [n, d], attn [layers] of [n, d], concat
    [layers] of [n, heads*d_v], weights [layers, heads, n, n], final [n, d] (the final norm's
    input), logits [n, vocab]; torch float64 tensors (batch dropped)."""

    resid: list
    attn: list
    concat: list
    weights: torch.Tensor
    final: torch.Tensor
    logits: torch.Tensor


class HookModel:
    """A saved checkpoint loaded by transformers (float64, eager), with hooks."""

    def __init__(self, folder):
        self.model = load_float64(folder)
        config = self.model.config
        self.family = config.model_type
        base = self.model.base_model
        gpt2 = self.family == "gpt2"
        self.blocks = list(base.h if gpt2 else base.layers)
        self.attns = [b.attn if gpt2 else b.self_attn for b in self.blocks]
        self.o_projs = [a.c_proj if gpt2 else a.o_proj for a in self.attns]
        self.final_norm = base.ln_f if gpt2 else base.norm
        self.lm_head = self.model.lm_head
        self.heads = config.num_attention_heads
        self.modeling = importlib.import_module(
            f"transformers.models.{self.family}.modeling_{self.family}"
        )

    def W_O(self, layer: int) -> torch.Tensor:
        """Block ``layer``'s output projection ``[heads*d_v, d]`` (math orientation)."""
        weight = self.o_projs[layer].weight
        return weight if self.family == "gpt2" else weight.T

    def W_U(self) -> torch.Tensor:
        """The unembedding ``[vocab, d]``."""
        return self.lm_head.weight

    def _forward(self, ids, hooks, pattern=None):
        """The model on ``ids`` with ``hooks`` (module, "pre" | "post", function), inside
        the exact float64 patches (and ``pattern``'s patched attention when given)."""
        handles = []
        with contextlib.ExitStack() as stack:
            stack.enter_context(exact_float64())
            if pattern is not None:
                stack.enter_context(self._pattern(*pattern))
            for module, kind, fn in hooks:
                if kind == "pre":
                    handles.append(module.register_forward_pre_hook(fn, with_kwargs=True))
                else:
                    handles.append(module.register_forward_hook(fn))
            try:
                with torch.no_grad():
                    return self.model(
                        input_ids=torch.tensor([list(ids)]),
                        output_attentions=True,
                        use_cache=False,
                    )
            finally:
                for handle in handles:
                    handle.remove()

    def capture(self, ids) -> Captured:
        """Run ``ids`` and keep every site's activations."""
        resid, attn, concat, final = {}, {}, {}, {}

        def keep_input(store, key):
            def hook(module, args, kwargs):
                value = args[0] if args else kwargs["hidden_states"]
                store[key] = value[0].clone()

            return hook

        def keep_output(layer):
            def hook(module, args, output):
                attn[layer] = output[0][0].clone()

            return hook

        hooks = [(self.final_norm, "pre", keep_input(final, 0))]
        for layer in range(len(self.blocks)):
            hooks.append((self.blocks[layer], "pre", keep_input(resid, layer)))
            hooks.append((self.attns[layer], "post", keep_output(layer)))
            hooks.append((self.o_projs[layer], "pre", keep_input(concat, layer)))
        out = self._forward(ids, hooks)
        layers = range(len(self.blocks))
        return Captured(
            resid=[resid[i] for i in layers],
            attn=[attn[i] for i in layers],
            concat=[concat[i] for i in layers],
            weights=torch.stack([a[0] for a in out.attentions]),
            final=final[0],
            logits=out.logits[0],
        )

    def patched_logits(self, ids, clean: Captured, site: str, layer: int, index: int):
        """The last position's logits ``[vocab]`` of ``ids`` with ``clean``'s activation at
        ``site`` of block ``layer``, position or head ``index``, written in by a hook."""

        def replace_input(value_of):
            def hook(module, args, kwargs):
                if args:
                    return (value_of(args[0]), *args[1:]), kwargs
                return args, {**kwargs, "hidden_states": value_of(kwargs["hidden_states"])}

            return hook

        def resid(x):
            x = x.clone()
            x[0, index] = clean.resid[layer][index]
            return x

        def head_columns(x):
            x = x.clone()
            d_v = x.shape[-1] // self.heads
            cols = slice(index * d_v, (index + 1) * d_v)
            x[0, :, cols] = clean.concat[layer][:, cols]
            return x

        def attn_output(module, args, output):
            patched = output[0].clone()
            patched[0, index] = clean.attn[layer][index]
            return (patched, *output[1:])

        hooks, pattern = [], None
        if site == "resid_pre":
            hooks.append((self.blocks[layer], "pre", replace_input(resid)))
        elif site == "attn_out":
            hooks.append((self.attns[layer], "post", attn_output))
        elif site == "head_out":
            hooks.append((self.o_projs[layer], "pre", replace_input(head_columns)))
        else:
            pattern = (layer, index, clean.weights[layer, index])
        return self._forward(ids, hooks, pattern).logits[0, -1]

    @contextlib.contextmanager
    def _pattern(self, layer: int, head: int, weights: torch.Tensor):
        """The eager attention of block ``layer`` with head ``head``'s weights replaced by
        ``weights [n, n]`` and its output recomputed from them (values unchanged)."""
        original = self.modeling.eager_attention_forward

        def eager(module, query, key, value, attention_mask, *args, **kwargs):
            output, probs = original(module, query, key, value, attention_mask, *args, **kwargs)
            if module.layer_idx != layer:
                return output, probs
            probs = probs.clone()
            probs[0, head] = weights
            group = query.shape[1] // value.shape[1]
            values = value.repeat_interleave(group, dim=1)  # [1, heads, n, d_v]
            return torch.matmul(probs, values).transpose(1, 2).contiguous(), probs

        self.modeling.eager_attention_forward = eager
        try:
            yield
        finally:
            self.modeling.eager_attention_forward = original


def metric(logits, pair) -> float:
    """``logit[a] − logit[b]`` of a ``[vocab]`` row."""
    return float(logits[pair[0]] - logits[pair[1]])


def reference_map(ref: HookModel, clean_ids, corrupted_ids, site: str, pair) -> np.ndarray:
    """The raw metric of every cell of ``site``'s map, by hooks: ``[layers, positions|heads]``."""
    clean = ref.capture(clean_ids)
    width = len(clean_ids) if site in ("resid_pre", "attn_out") else ref.heads
    out = np.empty((len(ref.blocks), width))
    for layer in range(len(ref.blocks)):
        for index in range(width):
            logits = ref.patched_logits(corrupted_ids, clean, site, layer, index)
            out[layer, index] = metric(logits, pair)
    return out


def reference_lens(ref: HookModel, ids) -> np.ndarray:
    """``[layers + 1, n, vocab]``: log-softmax of lm_head(final_norm(residual)) after the
    embeddings and after each block (the last from the final norm's own input)."""
    run = ref.capture(ids)
    rows = [*run.resid, run.final]
    with torch.no_grad(), exact_float64():
        logits = [ref.lm_head(ref.final_norm(r)) for r in rows]
    return np.stack([torch.log_softmax(lg, dim=-1).numpy() for lg in logits])


def reference_attribution(ref: HookModel, ids, target: int, distractor: int | None):
    """``[layers, heads]``: each head's output at the last position (its columns of the
    o_proj input times its rows of W_O), through the final norm with the scale of the final
    residual (centred for LayerNorm), times its weight, onto W_U[target] (− W_U[distractor])."""
    run = ref.capture(ids)
    r = run.final[-1]  # [d]
    norm = ref.final_norm
    layer_norm = isinstance(norm, torch.nn.LayerNorm)
    eps = norm.eps if layer_norm else norm.variance_epsilon
    spread = r - r.mean() if layer_norm else r
    scale = torch.sqrt((spread**2).mean() + eps)
    W_U = ref.W_U()
    direction = W_U[target] - (0 if distractor is None else W_U[distractor])
    out = np.empty((len(ref.blocks), ref.heads))
    with torch.no_grad():
        for layer in range(len(ref.blocks)):
            z = run.concat[layer][-1].reshape(ref.heads, -1)  # [heads, d_v]
            W_O = ref.W_O(layer).reshape(ref.heads, z.shape[1], -1)  # [heads, d_v, d]
            o = torch.einsum("hv,hvd->hd", z, W_O)  # [heads, d]
            if layer_norm:
                o = o - o.mean(dim=-1, keepdim=True)
            out[layer] = ((o / scale * norm.weight) @ direction).numpy()
    return out, float(
        run.logits[-1, target] - (0 if distractor is None else run.logits[-1, distractor])
    )
