"""Exporting token names in a script the system's fonts lack does not flood the terminal."""

from __future__ import annotations

import os
import subprocess
import sys


def test_hindi_export_prints_no_font_database_warnings(tmp_path):
    # On a system without a Devanagari font Qt warned once per font and script (about 60
    # lines); the export itself is fine, and the README names the font package to install.
    env = {k: v for k, v in os.environ.items() if k != "QT_LOGGING_RULES"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "attention_explorer",
            "export",
            "--example",
            "hindi-decoder",
            "--stage",
            "weights",
            "--format",
            "png,svg",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "qt.text.font.db" not in done.stderr
    assert done.stderr.strip() == ""
