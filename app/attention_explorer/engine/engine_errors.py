"""The engine's errors: the one a person gets for wrong input, and float overflow."""


class AttentionInputError(ValueError):
    """An invalid configuration or input array.

    ``field`` names what is wrong (``"heads"``, ``"inputs.K"``) so a GUI can point at it;
    the message says what would be valid.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ComputeOverflow(ArithmeticError):
    """A pass overflowed its dtype (inputs near 1e30 in float32).

    Raised by a step; :func:`attention_explorer.engine.compute` catches it and redoes the
    pass in float64. ``where`` names the step that overflowed ("projections", "scores", ...).
    """

    def __init__(self, where: str):
        super().__init__(f"values overflowed in {where}")
        self.where = where


def require_finite(ops, where: str, *arrays) -> None:
    """Raise :class:`ComputeOverflow` naming ``where`` unless every value of ``arrays`` is
    finite (``ops``: the arrays' primitives, :func:`attention_explorer.kernels.ops_for`)."""
    if not ops.all_finite(*arrays):
        raise ComputeOverflow(where)
