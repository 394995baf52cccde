"""Build the one-folder binary and its archive; run from the repository root.

    python packaging/build.py                 # dist/attention-explorer/ + dist/attention-explorer-
                                              #   <version>-<os>-<arch>.tar.gz (numpy engine only)
    python packaging/build.py --with-torch    # the same with torch for CPU ("-torch" in the name)
    python packaging/build.py --smoke         # then run --version and --self-test on the binary

The archive holds one folder, ``attention-explorer-<version>/``, with the binary folder
``attention-explorer/``, ``attention-explorer.desktop``, ``resources/icon.png`` and ``icon.svg``,
and ``install.sh`` (menu launcher for the current user; ``install.sh --uninstall`` removes it).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from app_version import package_version

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "attention-explorer.spec"
NAME = "attention-explorer"


def platform_tag() -> str:
    """``linux-x86_64``, ``macos-arm64``, ``windows-amd64``: the archive's platform part."""
    system = {"darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform.rstrip("0123"))
    return f"{system}-{platform.machine().lower() or 'unknown'}"


def archive_name(version: str, with_torch: bool = False) -> str:
    """The archive's file name without extension, e.g. attention-explorer-0.1.0-linux-x86_64."""
    return f"{NAME}-{version}-{platform_tag()}" + ("-torch" if with_torch else "")


def run_pyinstaller(distpath: Path, workpath: Path, with_torch: bool = False) -> Path:
    """Run PyInstaller on the spec; return the built folder ``distpath/attention-explorer``."""
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--clean",
        "--log-level",
        "WARN",
        "--distpath",
        str(distpath),
        "--workpath",
        str(workpath),
        str(SPEC),
    ]
    env = dict(os.environ, ATTENTION_EXPLORER_WITH_TORCH="1" if with_torch else "0")
    subprocess.run(command, cwd=ROOT, env=env, check=True)
    folder = distpath / NAME
    if not (folder / executable_name()).is_file():
        raise SystemExit(f"build: PyInstaller did not produce {folder / executable_name()}")
    return folder


def executable_name() -> str:
    """The binary's file name on this platform."""
    return f"{NAME}.exe" if sys.platform == "win32" else NAME


def install_script(version: str) -> str:
    """packaging/install.sh with the version filled in."""
    text = (ROOT / "packaging" / "install.sh").read_text(encoding="utf-8")
    return text.replace("@VERSION@", version)


def _add_file(archive, source: Path | None, name: str, text: str | None, mode: int) -> None:
    if isinstance(archive, tarfile.TarFile):
        if text is not None:
            import io

            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            archive.addfile(info, io.BytesIO(data))
        else:
            archive.add(source, arcname=name)
    elif text is not None:
        archive.writestr(name, text)
    else:
        for path in [source, *sorted(source.rglob("*"))] if source.is_dir() else [source]:
            archive.write(path, f"{name}/{path.relative_to(source)}" if path != source else name)


def make_archive(folder: Path, out_dir: Path, version: str, with_torch: bool = False) -> Path:
    """Pack ``folder`` with the .desktop file, the icons and install.sh; return the archive.

    A .tar.gz on Linux and macOS (keeps the executable bit), a .zip on Windows.
    """
    top = archive_name(version, with_torch)
    base = NAME + f"-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    zipped = sys.platform == "win32"
    path = out_dir / (top + (".zip" if zipped else ".tar.gz"))
    files: list[tuple[Path | None, str, str | None, int]] = [
        (folder, f"{base}/{NAME}", None, 0),
        (ROOT / "resources" / f"{NAME}.desktop", f"{base}/{NAME}.desktop", None, 0),
        (ROOT / "resources" / "icon.png", f"{base}/resources/icon.png", None, 0),
        (ROOT / "resources" / "icon.svg", f"{base}/resources/icon.svg", None, 0),
        (None, f"{base}/install.sh", install_script(version), 0o755),
    ]
    opener = (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) if zipped else tarfile.open(path, "w:gz")
    )
    with opener as archive:
        for source, name, text, mode in files:
            _add_file(archive, source, name, text, mode)
    return path


def folder_size(folder: Path) -> int:
    """Bytes used by the files under ``folder`` (links not followed)."""
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    """Build, pack and (with --smoke) check the binary; print what was made."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--with-torch", action="store_true", help="include torch (CPU)")
    parser.add_argument("--distpath", type=Path, default=ROOT / "dist")
    parser.add_argument("--workpath", type=Path, default=ROOT / "build" / "pyinstaller")
    parser.add_argument("--no-archive", action="store_true", help="only the folder")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="run --version, --self-test and (with the MiniLM weights package) model",
    )
    args = parser.parse_args(argv)

    version = package_version()
    folder = run_pyinstaller(args.distpath.resolve(), args.workpath.resolve(), args.with_torch)
    print(f"built {folder} ({folder_size(folder) / 1e6:.0f} MB)")
    if not args.no_archive:
        archive = make_archive(folder, args.distpath.resolve(), version, args.with_torch)
        print(f"packed {archive} ({archive.stat().st_size / 1e6:.0f} MB)")
    if args.smoke:
        sys.path.insert(0, str(ROOT / "packaging"))
        from smoke import model_folder, smoke_test

        return smoke_test(folder / executable_name(), version, model_folder())
    return 0


if __name__ == "__main__":
    sys.exit(main())
