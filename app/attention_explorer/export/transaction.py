"""All-or-nothing multi-file writes: every file is written under a hidden name first, then the
whole set is moved into place; if anything fails, the folder is put back as it was.

    with FileSet(folder) as files:
        for name in names:
            write(files.staging(name))   # writes to a hidden temporary file
    # leaving the block moves every file into place, replacing older ones; on an error, files
    # replaced so far are restored, new ones removed, and every temporary file deleted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


class FileSet:
    """A set of files written together into ``folder``, or not at all."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._token = secrets.token_hex(4)
        self._staged: list[tuple[Path, Path]] = []  # (temporary, target)

    def staging(self, filename: str) -> Path:
        """Where to write ``filename`` for now (a hidden name in the same folder, same suffix)."""
        temp = self.folder / f".{self._token}.{filename}"
        self._staged.append((temp, self.folder / filename))
        return temp

    def targets(self) -> list[Path]:
        """The final paths, in the order they were staged."""
        return [target for _, target in self._staged]

    def __enter__(self) -> FileSet:
        return self

    def __exit__(self, kind, error, trace) -> bool:
        if kind is not None:
            self._discard()
            return False
        self._commit()
        return False

    def _discard(self) -> None:
        for temp, _ in self._staged:
            with contextlib.suppress(OSError):
                temp.unlink()

    def _commit(self) -> None:
        """Move every staged file into place; on failure undo the moves made so far."""
        backups: list[tuple[Path, Path]] = []  # (backup, target) of replaced files
        placed: list[Path] = []
        try:
            for temp, target in self._staged:
                if target.exists():
                    backup = self.folder / f".{self._token}.{target.name}.old"
                    os.replace(target, backup)
                    backups.append((backup, target))
                os.replace(temp, target)
                placed.append(target)
        except BaseException:
            for target in placed:
                with contextlib.suppress(OSError):
                    target.unlink()
            for backup, target in backups:
                with contextlib.suppress(OSError):
                    os.replace(backup, target)
            self._discard()
            raise
        for backup, _ in backups:
            with contextlib.suppress(OSError):
                backup.unlink()
