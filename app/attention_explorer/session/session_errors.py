"""SessionFileError, the one error every way of reading a session ends in, and message wording."""

from __future__ import annotations

import re


class SessionFileError(ValueError):
    """A session file that cannot be read or written; ``path`` is the JSON path of the problem.

    ``str(error)`` is one line: ``"inputs.K: expected 1x3x2 (...), got 1x2x2"``.
    """

    def __init__(self, path: str, message: str):
        message = " ".join(str(message).split())  # always one line
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<key>.*)`$", re.DOTALL)
_MISSING = re.compile(r"^Object missing required field `(?P<key>.*)`$", re.DOTALL)
_RANGE = "a number beyond the range of floating point (about ±1.8e308)"


def _join(prefix: str, path: str) -> str:
    path = path.lstrip(".")
    if not prefix:
        return path
    return f"{prefix}{path}" if path.startswith("[") or not path else f"{prefix}.{path}"


def _plain(message: str) -> str:
    """msgspec's wording, lower-cased and without backticks."""
    message = message.replace("`", "")
    if message == "Number out of range":
        return _RANGE
    if message.startswith("Invalid enum value"):
        return message.replace("Invalid enum value", "not one of the allowed values:", 1)
    return message[:1].lower() + message[1:]


def path_of(error_text: str, prefix: str = "", known: dict | None = None) -> tuple[str, str]:
    """(JSON path, message) from a msgspec ValidationError text such as
    ``Expected `int`, got `str` - at `$.config.heads```, with ``prefix`` put before the path.

    ``known`` maps an index-free object path to the keys it allows, to list them when a key is
    unknown.
    """
    match = _AT.match(error_text)
    message, path = match["message"], _join(prefix, match["path"] or "")
    unknown = _UNKNOWN.match(message)
    if unknown:
        where = re.sub(r"\[\d+\]", "", path)
        keys = (known or {}).get(where)
        listed = f"; known: {', '.join(keys)}" if keys else ""
        return _join(path, unknown["key"]), f"unknown key{listed}"
    missing = _MISSING.match(message)
    if missing:
        return _join(path, missing["key"]), "is missing"
    return path, _plain(message)
