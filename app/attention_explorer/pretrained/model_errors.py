"""ModelError: the one exception every model-loading problem raises, with a clear message."""

from __future__ import annotations


class ModelError(ValueError):
    """A model that cannot be loaded or run: missing files, an unsupported architecture,
    text the model cannot take, a layer out of range, or the ``model`` extra not installed.

    ``str(error)`` is one sentence for the user; ``what`` names the thing that is wrong
    (``"files"``, ``"architecture"``, ``"text"``, ``"layer"``, ``"extra"``, ``"source"``).
    """

    def __init__(self, what: str, message: str):
        super().__init__(message)
        self.what = what
        self.message = message


#: The install hint for the optional libraries the model support needs.
EXTRA_HINT = 'pip install "attention-explorer[model]"'


def require_extra(module: str):
    """Import ``module`` (``safetensors.numpy`` or ``tokenizers``) or raise a ModelError."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise ModelError(
            "extra",
            f"opening a model needs the {top} library, which is not installed; "
            f"install the model extra: {EXTRA_HINT}",
        ) from None


def is_panic(exc: BaseException) -> bool:
    """True when ``exc`` is a Rust panic raised through pyo3 (``pyo3_runtime.PanicException``,
    a BaseException, as tokenizers raises on an Oniguruma retry limit): to be reported as an
    error, never left to end the program or a worker thread silently."""
    kind = type(exc)
    return kind.__name__ == "PanicException" or any(
        k.__name__ == "PanicException" for k in kind.__mro__
    )


def panic_message(exc: BaseException) -> str:
    """One line for a Rust panic ``exc``."""
    first = (str(exc).splitlines() or [""])[0]
    return f"the tokenizer library failed inside (a Rust panic): {first}".rstrip(": ")
