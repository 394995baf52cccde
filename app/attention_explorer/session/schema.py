"""The session file format, declared once as msgspec types (the JSON Schema is made from them).

msgspec was chosen over pydantic v2 by measurement (see the schema helper's report and
``tests/session/test_schema.py``): on a 512-token session it decodes and validates in 1.4 ms
against 1.8 ms, its install is 0.7 MB against 9.8 MB (pydantic + pydantic_core) for the packaged
binary, and its errors carry the JSON path in today's style (``config.custom_mask[0][0]``).

Every type is strict: booleans are booleans, strings are strings, integers have bounds, and no
field accepts an arbitrary JSON value, so nesting depth is bounded by the types. Matrices are
kept as raw JSON here (:class:`msgspec.Raw`) and decoded by :mod:`session.matrices`, which
knows how many levels each one has.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Raw, Struct, UnsetType

from attention_explorer.engine.budget import MAX_D_MODEL, MAX_HEADS, MAX_TOKENS
from attention_explorer.engine.config import (
    AttentionKind,
    MaskKind,
    Mode,
    Normalizer,
    Positional,
    QKNorm,
    QKNormWidth,
    ScaleRule,
)

FORMAT_NAME = "attention-explorer-session"
FORMAT_VERSION = 1

#: Longest token name, title or short text; longest description or note.
MAX_NAME_CHARS = 1_000
MAX_TEXT_CHARS = 100_000

Heads = Annotated[int, Meta(ge=1, le=MAX_HEADS)]
Width = Annotated[int, Meta(ge=1, le=MAX_D_MODEL)]
KeyIndex = Annotated[int, Meta(ge=0, lt=MAX_TOKENS)]
Positive = Annotated[float, Meta(gt=0)]
RopeBase = Annotated[float, Meta(gt=1, description="RoPE base theta (default 10000)")]
Seed = Annotated[int, Meta(ge=0, le=2**32 - 1)]
Name = Annotated[str, Meta(max_length=MAX_NAME_CHARS)]
Text = Annotated[str, Meta(max_length=MAX_TEXT_CHARS)]
Tokens = Annotated[list[Name], Meta(min_length=1, max_length=MAX_TOKENS)]
MaskRow = Annotated[list[bool], Meta(max_length=MAX_TOKENS)]

_NUMBER = {"type": "number"}


def _nested(levels: int) -> dict:
    """JSON Schema of ``levels`` nested non-empty lists of numbers."""
    schema: dict = _NUMBER
    for _ in range(levels):
        schema = {"type": "array", "minItems": 1, "items": schema}
    return schema


def _matrix(levels: tuple[int, ...], what: str) -> object:
    shapes = [_nested(n) for n in levels]
    extra = shapes[0] if len(shapes) == 1 else {"oneOf": shapes}
    return Annotated[Raw | UnsetType, Meta(description=what, extra_json_schema=extra)]


Matrix2 = _matrix((2,), "rows of numbers")
Vector = _matrix((1,), "one number per column")
HeadMatrix = _matrix((3, 2), "heads x tokens x d, or tokens x d for a single head")


class _Strict(Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Base of every object in the format: unknown keys are refused."""


PositiveNumber = Annotated[float, Meta(gt=0)]
Context = Annotated[int, Meta(ge=1, le=10**9)]
FactorList = Annotated[list[PositiveNumber], Meta(max_length=MAX_D_MODEL)]


class RopeParameters(_Strict):
    """``config.rope_parameters``: the RoPE scaling's settings beside its kind
    (``rope_scaling``) and ``rope_factor``, named as transformers names them: llama3's
    ``low_freq_factor``/``high_freq_factor``; the pretraining context
    ``original_max_position_embeddings``; the long-context kinds' ``max_position_embeddings``
    (required by dynamic, yarn and longrope), ``attention_factor``; yarn's ``beta_fast``,
    ``beta_slow``, ``mscale``, ``mscale_all_dim``, ``truncate``; longrope's ``short_factor``
    and ``long_factor`` (one per turned pair)."""

    low_freq_factor: PositiveNumber | UnsetType = UNSET
    high_freq_factor: PositiveNumber | UnsetType = UNSET
    original_max_position_embeddings: Context | UnsetType = UNSET
    max_position_embeddings: Context | UnsetType = UNSET
    attention_factor: PositiveNumber | UnsetType = UNSET
    beta_fast: PositiveNumber | UnsetType = UNSET
    beta_slow: PositiveNumber | UnsetType = UNSET
    mscale: PositiveNumber | UnsetType = UNSET
    mscale_all_dim: PositiveNumber | UnsetType = UNSET
    truncate: bool | UnsetType = UNSET
    short_factor: FactorList | UnsetType = UNSET
    long_factor: FactorList | UnsetType = UNSET


class ConfigFields(_Strict):
    """``config``: settings; a missing one takes its default (AttentionConfig) or is inferred."""

    mode: Mode | UnsetType = UNSET
    heads: Heads | UnsetType = UNSET
    d_model: Width | UnsetType = UNSET
    d_k: Width | None | UnsetType = UNSET
    d_v: Width | None | UnsetType = UNSET
    kv_heads: Heads | None | UnsetType = UNSET
    mask: MaskKind | UnsetType = UNSET
    padded_keys: Annotated[list[KeyIndex], Meta(max_length=MAX_TOKENS)] | UnsetType = UNSET
    custom_mask: Annotated[list[MaskRow], Meta(max_length=MAX_TOKENS)] | None | UnsetType = UNSET
    scale: ScaleRule | UnsetType = UNSET
    scale_factor: Positive | UnsetType = UNSET
    temperature: Positive | UnsetType = UNSET
    normalizer: Normalizer | UnsetType = UNSET
    positional: Positional | UnsetType = UNSET
    positional_seed: Seed | UnsetType = UNSET
    attention: AttentionKind | UnsetType = UNSET
    use_output_projection: bool | UnsetType = UNSET
    rope_theta: RopeBase | UnsetType = UNSET
    rope_scaling: (
        Literal["default", "linear", "llama3", "dynamic", "yarn", "longrope"] | UnsetType
    ) = UNSET
    rope_parameters: RopeParameters | UnsetType = UNSET
    rope_factor: Positive | UnsetType = UNSET
    position_offset: Annotated[int, Meta(ge=0, le=10**7)] | UnsetType = UNSET
    qk_norm: QKNorm | UnsetType = UNSET
    qk_norm_width: QKNormWidth | UnsetType = UNSET
    qk_norm_eps: Annotated[float, Meta(gt=0, description="QK-norm's epsilon")] | UnsetType = UNSET
    softcap: (
        Annotated[float, Meta(gt=0, description="cap of cap·tanh(scaled/cap); null: off")]
        | None
        | UnsetType
    ) = UNSET
    rotary_fraction: (
        Annotated[float, Meta(gt=0, le=1, description="share of d_k that RoPE turns")] | UnsetType
    ) = UNSET
    window: (
        Annotated[int, Meta(ge=1, le=MAX_TOKENS, description="sliding window (keys back)")]
        | None
        | UnsetType
    ) = UNSET
    attention_sinks: (
        Annotated[bool, Meta(description="a sink logit per head in each softmax row (gpt-oss)")]
        | UnsetType
    ) = UNSET


class InputFields(_Strict):
    """``inputs``: the mode and its matrices (direct: Q, K, V; projection: X and weights)."""

    mode: Mode = "direct"
    Q: HeadMatrix = UNSET
    K: HeadMatrix = UNSET
    V: HeadMatrix = UNSET
    X: Matrix2 = UNSET
    X_kv: Matrix2 = UNSET
    W_Q: Matrix2 = UNSET
    W_K: Matrix2 = UNSET
    W_V: Matrix2 = UNSET
    W_O: Matrix2 = UNSET
    b_Q: Vector = UNSET
    b_K: Vector = UNSET
    b_V: Vector = UNSET
    b_O: Vector = UNSET
    q_norm: Vector = UNSET
    k_norm: Vector = UNSET
    sinks: Vector = UNSET


class Note(_Strict):
    """One note shown with a session, e.g. where a tutorial rounds."""

    text: Text
    title: Name = ""


class Focus(_Strict):
    """The cell a worked example asks to follow: by index (``row``, ``col``) or by token
    (``query``, ``key``: the first token with that name)."""

    row: KeyIndex | UnsetType = UNSET
    col: KeyIndex | UnsetType = UNSET
    query: Name | UnsetType = UNSET
    key: Name | UnsetType = UNSET


#: A knocked-out head of a model session: [layer, head].
KnockedHead = tuple[Annotated[int, Meta(ge=0, le=10_000)], Annotated[int, Meta(ge=0, le=10_000)]]


class ModelOrigin(_Strict):
    """Where a session loaded from a real model came from (``attention-explorer model``), and
    the heads knocked out in it (``knockout``: [layer, head] pairs)."""

    name: Name
    text: Text
    layer: Annotated[int, Meta(ge=0, le=10_000)]
    folder: Text | UnsetType = UNSET
    knockout: Annotated[list[KnockedHead], Meta(max_length=1_000_000)] | UnsetType = UNSET


class Experiment(_Strict):
    """A one-click experiment and where the example sits in the Examples menu."""

    question: Text | UnsetType = UNSET
    expect: Text | UnsetType = UNSET
    source: Name | UnsetType = UNSET
    group: Name | UnsetType = UNSET
    order: Annotated[int, Meta(ge=0, le=10**9)] | UnsetType = UNSET
    focus: Focus | UnsetType = UNSET
    model: ModelOrigin | UnsetType = UNSET
    #: ``try`` in the file (a Python keyword, hence the rename).
    try_: ConfigFields | UnsetType = msgspec.field(default=UNSET, name="try")


ARRAY_NAMES = (
    "Q", "K", "V", "X", "X_kv", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O",
    "q_norm", "k_norm", "sinks",
)  # fmt: skip
ArrayName = Literal[ARRAY_NAMES]
Dimension = Annotated[int, Meta(ge=1, le=10**7)]
CellIndex = Annotated[int, Meta(ge=0, le=10**7)]


class BinaryArray(_Strict):
    """An array in binary form: base64 of its little-endian numbers (``<f4`` or ``<f8``), row
    after row, with its shape. Standalone files and model references use it (no pickle)."""

    dtype: Literal["<f4", "<f8"]
    shape: Annotated[list[Dimension], Meta(min_length=1, max_length=3)]
    data: str


BinaryInputs = msgspec.defstruct(
    "BinaryInputs",
    [(name, BinaryArray | UnsetType, UNSET) for name in ARRAY_NAMES],
    bases=(_Strict,),
    module=__name__,
)
BinaryInputs.__doc__ = "Input matrices in binary form, by name (each one optional)."


def binary_arrays(inputs) -> dict:
    """The arrays a :data:`BinaryInputs` object gives, by name (BinaryArray values)."""
    found = {name: getattr(inputs, name) for name in ARRAY_NAMES}
    return {name: value for name, value in found.items() if value is not UNSET}


#: One changed cell: (array, row, column, value); a vector's cells have row 0.
CellChange = tuple[ArrayName, CellIndex, CellIndex, float]


class ModelReference(_Strict):
    """A session opened from a real model, saved as the model's name and what was changed.

    Opening the file finds the model again (``folder`` first, then ``id`` among the models
    available offline), checks ``fingerprint`` (config.json, the safetensors headers, the file
    sizes, tokenizer.json), rebuilds layer ``layer`` on ``text``, then applies ``changes``
    (cells), ``arrays`` (whole arrays) and ``removed`` (arrays the edited session dropped).
    """

    id: Name
    text: Text
    layer: Annotated[int, Meta(ge=0, le=10_000)]
    fingerprint: Name
    folder: Text | UnsetType = UNSET
    changes: Annotated[list[CellChange], Meta(max_length=10**7)] = msgspec.field(
        default_factory=list
    )
    arrays: BinaryInputs = msgspec.field(default_factory=BinaryInputs)
    removed: Annotated[list[ArrayName], Meta(max_length=len(ARRAY_NAMES))] = msgspec.field(
        default_factory=list
    )


class Header(Struct):
    """The two keys read first, so that any JSON object is told whether it is a session file."""

    format: str | UnsetType = UNSET
    version: Annotated[int, Meta(ge=-(2**31), le=2**31)] | UnsetType = UNSET


class SessionFile(_Strict):
    """A whole session file (format version 1)."""

    format: Literal["attention-explorer-session"]
    version: Annotated[int, Meta(ge=1, le=FORMAT_VERSION)]
    tokens: Tokens
    inputs: InputFields
    config: ConfigFields = msgspec.field(default_factory=ConfigFields)
    kv_tokens: Tokens | UnsetType = UNSET
    name: Name = "Untitled"
    description: Text = ""
    notes: Annotated[list[Note], Meta(max_length=1_000)] = msgspec.field(default_factory=list)
    experiment: Experiment = msgspec.field(default_factory=Experiment)
    #: Standalone files: the input matrices in binary form (``inputs`` then holds only mode).
    arrays: BinaryInputs | UnsetType = UNSET
    #: Model sessions: the model to rebuild from, and the learner's changes.
    model: ModelReference | UnsetType = UNSET


HEADER_DECODER = msgspec.json.Decoder(Header)
SESSION_DECODER = msgspec.json.Decoder(SessionFile)

#: The struct type found at each (index-free) JSON path, for naming unknown keys.
OBJECT_AT = {
    "": SessionFile,
    "config": ConfigFields,
    "config.rope_parameters": RopeParameters,
    "experiment.try.rope_parameters": RopeParameters,
    "inputs": InputFields,
    "notes": Note,
    "experiment": Experiment,
    "experiment.try": ConfigFields,
    "experiment.focus": Focus,
    "experiment.model": ModelOrigin,
    "model": ModelReference,
    "model.arrays": BinaryInputs,
    "arrays": BinaryInputs,
    **{f"{at}.{name}": BinaryArray for at in ("arrays", "model.arrays") for name in ARRAY_NAMES},
}


def field_names(struct: type[Struct]) -> list[str]:
    """The keys a session file may use in an object of type ``struct``, as written in JSON."""
    return list(struct.__struct_encode_fields__)


def given(obj: Struct) -> dict:
    """The fields of ``obj`` that the file gave, as plain JSON values (keys as in the file)."""
    return msgspec.to_builtins(obj)


def session_json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a session file, for editors to validate as people type.

    ``attention-explorer schema`` prints it; ``resources/session.schema.json`` holds a copy that
    a test keeps equal to this.
    """
    schema = msgspec.json.schema(SessionFile)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Attention Explorer session"
    schema["description"] = (
        f"A session file of Attention Explorer (format {FORMAT_NAME!r}, version {FORMAT_VERSION})."
    )
    return schema
