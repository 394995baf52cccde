"""The one error type the engine raises for input a person got wrong."""


class AttentionInputError(ValueError):
    """An invalid configuration or input array.

    ``field`` names what is wrong (``"heads"``, ``"inputs.K"``) so a GUI can point at it;
    the message says what would be valid.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
