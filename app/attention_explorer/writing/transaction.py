"""All-or-nothing multi-file writes that a crash cannot turn into a lost file.

    with FileSet(folder) as files:
        for name in names:
            write(files.staging(name))   # writes to a hidden temporary file
    # leaving the block moves every file into place, replacing older ones; on an error, files
    # replaced so far are restored, new ones removed, and every temporary file deleted.

Each file moves in with one ``os.replace`` (atomic), after its old content was kept under a
second name by a hard link (a copy where links are not possible). So a crash or a kill at any
moment leaves every file either old or new, never missing. The hidden temporary names
(``.ae-PID-TOKEN-N.part.csv``, ``.old``) are short and are removed by the next write into the
folder (:func:`attention_explorer.writing.output_policy.sweep_leftovers`). Every target passes the
output policy (no devices, no foreign symlinks, no read-only files).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from attention_explorer.writing.atomic import describe_os_error, policy_target
from attention_explorer.writing.export_errors import ExportError
from attention_explorer.writing.output_policy import sweep_leftovers, temp_name


class FileSet:
    """A set of files written together into ``folder``, or not at all."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._prefix = temp_name("part")  # one token for the whole set
        self._staged: list[tuple[Path, Path, Path]] = []  # (temporary, real target, as named)
        sweep_leftovers(self.folder)

    def staging(self, filename: str) -> Path:
        """Where to write ``filename`` for now: a short hidden name next to the file that will be
        replaced, keeping the suffix (``weights.csv`` -> ``.ae-PID-TOKEN-3.part.csv``)."""
        named = self.folder / filename
        target = policy_target(named)  # refused now, before anything is moved
        stem = self._prefix.rsplit(".part", 1)[0]
        temp = target.parent / f"{stem}-{len(self._staged)}.part{Path(filename).suffix}"
        self._staged.append((temp, target, named))
        return temp

    def targets(self) -> list[Path]:
        """The final paths, as named, in the order they were staged."""
        return [named for _, _, named in self._staged]

    def __enter__(self) -> FileSet:
        return self

    def __exit__(self, kind, error, trace) -> bool:
        if kind is not None:
            self._discard()
            return False
        self._commit()
        return False

    def _discard(self) -> None:
        for temp, _, _ in self._staged:
            with contextlib.suppress(OSError):
                temp.unlink()

    @staticmethod
    def _keep_old(target: Path, backup: Path) -> None:
        """A second name for ``target``'s current content (a hard link, else a copy)."""
        try:
            os.link(target, backup)
        except OSError:
            shutil.copy2(target, backup)

    def _commit(self) -> None:
        """Move every staged file into place; on failure put the old files back."""
        backups: list[tuple[Path, Path]] = []  # (backup, target) of replaced files
        placed: list[Path] = []  # new files (nothing to restore: remove them)
        current: Path | None = None
        try:
            for temp, target, _ in self._staged:
                current = target
                policy_target(target)  # the same check again, just before the move
                if os.path.lexists(target):
                    backup = temp.with_name(temp.name.split(".part")[0] + ".old")
                    self._keep_old(target, backup)
                    backups.append((backup, target))
                else:
                    placed.append(target)
                os.replace(temp, target)  # atomic: target is old or new, never missing
        except BaseException as exc:
            self._undo(placed, backups)
            if isinstance(exc, OSError):
                raise ExportError(describe_os_error(exc, current or self.folder)) from None
            raise
        for backup, _ in backups:
            with contextlib.suppress(OSError):
                backup.unlink()

    def _undo(self, placed: list[Path], backups: list[tuple[Path, Path]]) -> None:
        for target in placed:
            with contextlib.suppress(OSError):
                target.unlink()
        for backup, target in backups:
            with contextlib.suppress(OSError):
                if os.path.samefile(backup, target):  # never replaced: rename would do nothing
                    backup.unlink()
                else:
                    os.replace(backup, target)  # atomic: the old content is back
        self._discard()
