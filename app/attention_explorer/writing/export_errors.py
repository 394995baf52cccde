"""The one error type the export module raises."""


class ExportError(Exception):
    """An export that could not be done: a one-line message a person can act on.

    Examples: ``folder /x/y does not exist``, ``unknown stage 'wieghts'; choose from ...``,
    ``the disk is full: could not write weights_head0.png``.
    """

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))  # always one line
        self.message = str(self)
