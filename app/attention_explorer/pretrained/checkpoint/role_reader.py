"""Tensors of a checkpoint by role (``W_Q`` of layer i, the word table, a norm…), through a
family's :class:`~attention_explorer.pretrained.architecture.Architecture` record: its tensor
names, prefixes, the orientation of linear weights and the names of norm parameters.

A bias is read where the record (and the config key it names) says the layer has one, and
nowhere else: a bias tensor the config rules out, or one it promises and the file lacks, is
refused naming both (:meth:`RoleReader.bias`). Why refuse rather than follow the config as
transformers does: transformers drops an unexpected bias with a load-report line and fills a
missing one with zeros, so its numbers are not what the checkpoint's author trained (Qwen2
weights labelled llama ran 1.7-2.6 off in logits); a file whose tensors contradict its config
is not run, neither way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from attention_explorer.pretrained.architecture import (
    FFN_NORM_TENSORS,
    QK_NORM_TENSORS,
    SINK_TENSOR,
    Architecture,
)
from attention_explorer.pretrained.checkpoint.layout_match import other_layout
from attention_explorer.pretrained.checkpoint.stored import StoredTable
from attention_explorer.pretrained.checkpoint.tensor_file import TensorFile
from attention_explorer.pretrained.checkpoint.validate import check_shape
from attention_explorer.pretrained.model_errors import ModelError

Norm = tuple[np.ndarray, "np.ndarray | None"]  # (gamma [d], beta [d] or None for RMSNorm)


class RoleReader:
    """Tensors by role, for one architecture: names, prefixes, orientation, norms.

    Tensors come converted to ``dtype``. ``dry``: nothing is converted (a shape-only stand-in
    is returned) and every name read is recorded in ``seen``: how a layer's tensors and sizes
    are learnt without reading them. ``rows``: the layers are converted once and kept, so
    linear weights are laid out for speed (row-major ``[in, out]``; the products of a short
    text were 30% slower on a transposed view) and Q, K and V are read in one product.
    ``config``: config.json, which says (through the record) which layers carry a bias.
    """

    def __init__(
        self,
        arch: Architecture,
        tensors: TensorFile,
        dtype=np.float64,
        dry=False,
        rows=False,
        config: Mapping | None = None,
    ):
        self.arch, self.t, self.dtype, self.dry = arch, tensors, np.dtype(dtype), dry
        self.config = {} if config is None else config
        self.rows = rows and not dry
        self.seen: list[str] = []
        self.sizes: dict = {}  # the checked sizes by role, set by the weight reader

    def name(self, role: str, i: int | None = None) -> str | None:
        """The tensor name of ``role`` (of layer ``i``), or None when the family has none."""
        pattern = self.arch.tensors.get(role)
        return None if pattern is None else pattern.format(i=i)

    def has(self, role: str, i: int | None = None, suffix: str = "") -> bool:
        """Whether the checkpoint holds ``role`` (of layer ``i``) + ``suffix``."""
        name = self.name(role, i)
        return name is not None and self.t.find(name + suffix, self.arch.prefixes) is not None

    def key(self, name: str, shape: tuple = ()) -> str:
        """The stored name of ``name``, its stored shape checked if given."""
        key = self.t.find(name, self.arch.prefixes)
        if key is None:
            other = other_layout(self.arch, self.t)  # relabelled weights: name their family
            if other:
                raise ModelError("files", f"{self.t.describe()}: {other} (no {name!r})")
            raise ModelError("files", f"{self.t.describe()} has no weight named {name!r}")
        if shape:
            check_shape(self.t.describe(), key, self.t.info(key)[1], shape)
        return key

    def get(self, name: str, shape: tuple = ()) -> np.ndarray:
        """Tensor ``name`` in the reader's dtype, its stored shape checked if given."""
        key = self.key(name, shape)
        if self.dry:  # no memory: a read-only stand-in with the stored shape
            self.seen.append(key)
            return np.broadcast_to(np.zeros((), self.dtype), self.t.info(key)[1])
        return self.t.get(key, self.dtype)

    def table(self, role: str, shape: tuple = ()) -> StoredTable | None:
        """A ``[rows, d]`` table left in the checkpoint (rows converted when read)."""
        name = self.name(role)
        return None if name is None else StoredTable(self.t, self.key(name, shape))

    def small(self, role: str, shape: tuple = ()) -> np.ndarray | None:
        """A small tensor by role (positions, token types), converted; None if absent."""
        name = self.name(role)
        return None if name is None else self.get(name, shape)

    def linear(self, role: str, i: int | None, d_in: int | None, d_out: int | None):
        """(W [in, out], b [out] or None). An ``out_in`` weight is converted as stored and
        handed on transposed: a row-major copy when the layers are kept (``rows``), else a
        view (F-ordered), which BLAS reads with no copy."""
        name = self.name(role, i)
        out_in = self.arch.linear_layout == "out_in"
        w = self.get(name + ".weight", shape=(d_out, d_in) if out_in else (d_in, d_out))
        if out_in:  # [in, out]
            w = np.ascontiguousarray(w.T) if self.rows else w.T
        return w, self.bias(role, i, w.shape[1])

    def bias(self, role: str, i: int | None, d_out: int) -> np.ndarray | None:
        """Linear ``role``'s bias ``[d_out]`` when the record and config say it has one, None
        when they say it has none; a ModelError naming the tensor and the config key (or the
        family) when the checkpoint disagrees either way."""
        name = self.name(role, i)
        wanted, key = self.arch.bias_rule(self.config, role)
        stored = self.t.find(name + ".bias", self.arch.prefixes)
        setting = f"{key}={json.dumps(self.config.get(key, wanted))}" if key else ""
        if wanted and stored is None:
            missing = self.key(name + ".weight").removesuffix(".weight") + ".bias"
            because = (
                f"config.json's {setting} requires" if key else f"{self.arch.label} always have"
            )
            raise ModelError(
                "files", f"{self.t.describe()} has no tensor {missing}, which {because}"
            )
        if not wanted and stored is not None:
            because = (
                f"config.json sets {setting}: the weights do not match the config"
                if key
                else f"{self.arch.label} have no bias there: the weights are not this family's"
            )
            raise ModelError(
                "files",
                f"{self.t.describe()}: tensor {stored} is present, but {because} "
                "(transformers would drop it)",
            )
        return self.get(name + ".bias", shape=(d_out,)) if wanted else None

    def qk_norms(self, i: int, d_q: int, d_kv: int | None = None) -> dict:
        """QK-norm's ``{"q_norm": [d_q], "k_norm": [d_kv]}`` RMSNorm weights of layer ``i``
        (each head's ``d_k``, or the whole projection's width for OLMo 2; ``d_kv`` defaults
        to ``d_q``) when the record has QK-norm (a missing tensor, a wrong shape or a bias is
        refused by name), else ``{}``; a QK-norm tensor in the file of a record without it
        (under the record's name or transformers' usual one, ``QK_NORM_TENSORS``) is refused
        by name."""
        roles = ("q_norm", "k_norm")
        if self.arch.qk_norm:
            widths = (d_q, d_q if d_kv is None else d_kv)
            return {  # as stored: the kernel adds the record's norm_offset (Gemma 3's 1 + w)
                role: self.norm(role, i, width, offset=False)[0]
                for role, width in zip(roles, widths)
            }
        for role in roles:
            pattern = self.arch.tensors.get(role, QK_NORM_TENSORS[role])
            stored = self.t.find(pattern.format(i=i) + ".weight", self.arch.prefixes)
            if stored is not None:
                raise ModelError(
                    "files",
                    f"{self.t.describe()}: tensor {stored} is present, but {self.arch.label} "
                    "have no QK-norm: the weights are not this family's",
                )
        return {}

    def sinks(self, i: int, heads: int) -> np.ndarray | None:
        """Layer ``i``'s attention sink logits ``[heads]`` when the record has sinks (a
        missing tensor or a wrong shape is refused by name), else None after checking that
        the file holds none (under the record's name or transformers' ``SINK_TENSOR``): a
        gpt-oss file relabelled is refused naming the tensor, not run without its sinks."""
        pattern = self.arch.tensors.get("sinks", SINK_TENSOR)
        if self.arch.attention_sinks:
            return self.get(pattern.format(i=i), shape=(heads,))  # [heads]
        stored = self.t.find(pattern.format(i=i), self.arch.prefixes)
        if stored is not None:
            raise ModelError(
                "files",
                f"{self.t.describe()}: tensor {stored} is present, but {self.arch.label} "
                "have no attention sinks: the weights are not this family's",
            )
        return None

    def no_foreign_norms(self, i: int) -> None:
        """Refuse (naming it) a feed-forward norm of layer ``i`` under transformers' names
        (``FFN_NORM_TENSORS``) that the record does not read: another family's weights."""
        named = set(self.arch.tensors.values())
        for pattern in FFN_NORM_TENSORS:
            stored = None
            if pattern not in named:
                stored = self.t.find(pattern.format(i=i) + ".weight", self.arch.prefixes)
            if stored is not None:
                raise ModelError(
                    "files",
                    f"{self.t.describe()}: tensor {stored} is present, but {self.arch.label} "
                    "have no such norm: the weights are not this family's",
                )

    def absent(self, role: str, i: int | None, why: str) -> None:
        """None, after checking that the file has no ``role`` tensor of layer ``i``, which the
        config rules out (``why`` says how); a ModelError naming the tensor when it has one
        (transformers would drop it: the weights were not made for this config)."""
        name = self.name(role, i)
        stored = None if name is None else self.t.find(name + ".weight", self.arch.prefixes)
        if stored is not None:
            raise ModelError(
                "files",
                f"{self.t.describe()}: tensor {stored} is present, but {why} (transformers "
                "would drop it): the weights do not match the config",
            )
        return None

    def norm(self, role: str, i: int | None, d: int, offset: bool = True) -> Norm | None:
        """A norm's (gamma, beta or None) by role, or None when the family has no such norm.
        A record with a ``norm_offset`` (Gemma's ``x̂ * (1 + w)``) gets ``offset + w`` as gamma:
        the factor the norm multiplies by, computed once in the reader's dtype (``offset``
        False: the weight as stored)."""
        name = self.name(role, i)
        if name is None:
            return None
        if self.has(role, i, ".gamma"):
            return self.get(name + ".gamma", shape=(d,)), self.get(name + ".beta", shape=(d,))
        bias = self.get(name + ".bias", shape=(d,)) if self.has(role, i, ".bias") else None
        if bias is not None and self.arch.norm == "rmsnorm":
            raise ModelError(
                "files",
                f"{self.t.describe()}: tensor {self.key(name + '.bias')} is present, but "
                f"{self.arch.label} use RMSNorm, which has no bias (transformers would drop it)",
            )
        gamma = self.get(name + ".weight", shape=(d,))  # [d]
        if offset and self.arch.norm_offset:
            gamma = gamma + self.dtype.type(self.arch.norm_offset)  # a new array, not a view
        return gamma, bias
