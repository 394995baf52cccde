"""Command line: launch the window (default), or compute / explain / export / list examples.

    attention-explorer [SESSION.json]            open the window
    attention-explorer compute SESSION.json      print a short summary, or --out trace.npz
    attention-explorer explain SESSION.json --stage weights --head 0 --cell 1,2
    attention-explorer export SESSION.json --stage weights --head all --format png --out DIR
    attention-explorer examples                  list the starter and the worked examples
    attention-explorer sweep MODEL --text … --out sweep.csv   which heads matter (knockouts)
    attention-explorer handout --example NAME --out walk.pdf   the walkthrough as a PDF
    attention-explorer patch MODEL --clean … --corrupted … --site resid_pre --answer A --wrong B
        --out patch.csv        activation patching (also: lens, attribution)
    attention-explorer --self-test | --version

Every parser lives in :mod:`.parsers`; the commands are written on the Python API
(:mod:`attention_explorer.api`). Errors print one line and exit with code 2; no tracebacks.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from attention_explorer.cli.parsers import (
    COMMANDS,
    PROG,
    build_gui_parser,
    build_parser,
    parse_command,
)

__all__ = ["COMMANDS", "PROG", "build_gui_parser", "build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``attention-explorer`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        from attention_explorer.cli.terminal_text import escaped_streams

        with escaped_streams():  # no printed text drives the terminal
            args = parse_command(argv)
            return _run_reporting_errors(args.command, lambda: _command(args.command)(args))
    args = build_gui_parser().parse_args(argv)
    if args.self_test:
        from attention_explorer.diagnostics.self_test import run_self_test

        return run_self_test()
    if args.session and not _names_a_file(args.session):
        return _fail(None, _unknown_command(args.session))
    return _run_reporting_errors(None, lambda: _open_window(args))


def _names_a_file(text: str) -> bool:
    """True for an existing path or a name ending in .json (which the window then reports)."""
    return text.lower().endswith(".json") or Path(text).expanduser().exists()


def _unknown_command(word: str) -> str:
    close = difflib.get_close_matches(word.lower(), COMMANDS, n=1, cutoff=0.5)
    hint = f"did you mean '{close[0]}'?" if close else f"choose from {', '.join(COMMANDS)}"
    return f"unknown command {word!r}; {hint} (or give a session .json file to open)"


def _command(name: str):
    from attention_explorer.cli import commands

    if name == "export":
        from attention_explorer.cli.export_command import cmd_export

        return cmd_export
    if name == "handout":
        from attention_explorer.cli.handout_command import cmd_handout

        return cmd_handout
    if name == "model":
        from attention_explorer.cli.model_command import cmd_model

        return cmd_model
    if name in ("patch", "lens", "attribution"):
        from attention_explorer.cli import causal_commands

        return getattr(causal_commands, f"cmd_{name}")
    if name == "sweep":
        from attention_explorer.cli.sweep_command import cmd_sweep

        return cmd_sweep
    return {
        "compute": commands.cmd_compute,
        "explain": commands.cmd_explain,
        "examples": commands.cmd_examples,
        "schema": commands.cmd_schema,
    }[name]


def _open_window(args) -> int:
    if args.example:  # refused here, on one line, before any window opens
        from attention_explorer import api

        return api.show(api.example(args.example))
    from attention_explorer.ui.window.app import run_app

    return run_app(session_path=args.session)


def _fail(command: str | None, message: str) -> int:
    prefix = f"{PROG} {command}" if command else PROG
    print(f"{prefix}: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _run_reporting_errors(command: str | None, run) -> int:
    """Run ``run()``; any error becomes one line on stderr and exit code 2."""
    try:
        return run()
    except BrokenPipeError:  # the reader left early (``schema | head``): not an error
        return _reader_gone()
    except KeyError as exc:
        return _fail(command, str(exc.args[0]) if exc.args else "not found")
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        return _fail(command, f"{reason}: {exc.filename}" if exc.filename else reason)
    except MemoryError:
        return _fail(command, "not enough memory for this session; try fewer tokens or heads")
    except Exception as exc:  # never a traceback; an unexpected kind says its type
        return _fail(command, _message(exc))


def _reader_gone() -> int:
    """Standard output's reader has closed: point it at the null device, so that Python's
    own flush at exit writes nothing either, and exit as a tool stopped by SIGPIPE does."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.__stdout__.fileno())
    finally:
        os.close(devnull)
    return 141


def _message(exc: Exception) -> str:
    """The message of a refusal as is; of anything unexpected, with its type in front."""
    from attention_explorer.cli.commands import UsageError
    from attention_explorer.writing.export_errors import ExportError

    if isinstance(exc, (UsageError, ExportError, ValueError)):  # input errors are ValueErrors
        return str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {exc}"
