"""Every argument parser of the command line: the window's, and each sub-command's.

Building a parser imports nothing heavy (no numpy, Qt or engine), so ``--help`` and
``--version`` answer at once. Parse errors are one line (``attention-explorer compute: error:
...``) and exit with code 2, like every other error.
"""

from __future__ import annotations

import argparse
import difflib
import sys

from attention_explorer._version import __version__
from attention_explorer.cli.causal_commands import add_causal_parsers
from attention_explorer.cli.handout_command import HANDOUT_ARGUMENTS
from attention_explorer.cli.sweep_command import add_sweep_parser
from attention_explorer.core.stages import CATALOGUE

PROG = "attention-explorer"
#: The sub-commands; anything else that is not a file to open is an unknown command.
COMMANDS = (
    "compute",
    "explain",
    "export",
    "examples",
    "model",
    "schema",
    "sweep",
    "handout",
    "patch",
    "lens",
    "attribution",
)
#: Stage names, in pipeline order, from the stage catalogue (pure Python, cheap to import).
STAGE_NAMES = tuple(CATALOGUE)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit code 2 (no usage block)."""

    def error(self, message: str):
        """Print ``PROG [command]: error: message`` on one line and exit with code 2."""
        print(f"{self.prog}: error: {' '.join(message.split())}", file=sys.stderr)
        sys.exit(2)


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """The session to work on: a file, or ``--example NAME``."""
    parser.add_argument("session", nargs="?", help="a session .json file")
    parser.add_argument("--example", metavar="NAME", help="a worked example instead of a file")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--backend/--device/--dtype, shared by the commands that run the engine."""
    parser.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    parser.add_argument(
        "--device", default="cpu", help="cpu (default), or with --backend torch: cuda, cuda:N, mps"
    )
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")


def cell(text: str) -> tuple[int, int]:
    """``ROW,COL`` as two integers (argparse type)."""
    try:
        i, j = (int(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ROW,COL such as 1,2, got {text!r}") from None
    return i, j


def explain_stage(text: str) -> str:
    """A stage ``explain`` can describe: its name, an alias or another case (argparse type);
    anything else is refused with the closest name ("did you mean 'weights'?") and the list."""
    names = [s for s in STAGE_NAMES if s != "X_kv"]
    other = {alias.lower(): name for name, entry in CATALOGUE.items() for alias in entry.aliases}
    other.update({name.lower(): name for name in names})
    found = other.get(text.lower())
    if found in names:
        return found
    close = difflib.get_close_matches(text.lower(), list(other), n=1, cutoff=0.6)
    hint = f"did you mean {other[close[0]]!r}? " if close else ""
    raise argparse.ArgumentTypeError(
        f"unknown stage {text!r}; {hint}choose from {', '.join(names)}"
    )


def decimals(text: str) -> int:
    """A count of decimals, 0..12 (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number 0..12, got {text!r}") from None
    if not 0 <= value <= 12:
        raise argparse.ArgumentTypeError(f"expected a whole number 0..12, got {value}")
    return value


#: A --flag/--no-flag option whose default (None) leaves the choice to the exporter.
_ON_OFF = {"action": argparse.BooleanOptionalAction}
#: A count of decimals, checked by :func:`decimals`.
_DECIMALS = {"type": decimals}


def _session_command(sub, name: str) -> argparse.ArgumentParser:
    """Sub-command ``name`` on one session: the session, its :data:`_ARGUMENTS` in order, then
    the engine options."""
    parser = sub.add_parser(name, **_TEXTS[name])
    add_source_options(parser)
    for flags, options in _ARGUMENTS.get(name, ()):
        parser.add_argument(*flags, **options)
    add_engine_options(parser)
    return parser


#: Every sub-command's help texts (the sweep's are with its own parser).
_TEXTS = {
    "compute": {
        "help": "run the engine on a session file",
        "description": "Print a short summary of every head's weights (at most 16 rows and "
        "columns each), or write every stage to an NPZ file with --out.",
    },
    "explain": {"help": "print the arithmetic behind one cell"},
    "export": {
        "help": "write pictures (png, svg, pdf) and numbers (csv, npy, npz) of a session",
        "description": "Write pictures and numbers of any stage and head, with no display "
        "needed. Files are named predictably: weights_head0.png, weights_grid.png (all heads), "
        "concat.png, output.csv, trace.npz.",
    },
    "examples": {"help": "list the worked examples (and the starter)"},
    "model": {
        "help": "load one layer of a real pretrained model (BERT, MiniLM, GPT-2) as a session",
        "description": "Tokenize TEXT with the model's own tokenizer, run the model up to "
        "LAYER, and write that layer's attention (X, W_Q, W_K, W_V, W_O, biases) as an editable "
        "session file, or print which token each head attends to most.",
    },
    "schema": {"help": "print the JSON Schema of session files (for editors that validate)"},
    "handout": {"help": "write the walkthrough as a PDF, one page per step"},
}

#: The arguments of the simple sub-commands on a session: name -> ((flags, options), ...).
_ARGUMENTS = {
    "compute": (
        (("--out",), {"metavar": "FILE.npz", "help": "write every stage to this .npz file"}),
    ),
    "explain": (
        (
            ("--stage",),
            {
                "default": "weights",
                "type": explain_stage,
                "metavar": "STAGE",
                "help": "default weights; one of "
                + ", ".join(s for s in STAGE_NAMES if s != "X_kv"),
            },
        ),
        (("--head",), {"type": int, "default": 0}),
        (("--cell",), {"type": cell, "default": (0, 0), "help": "ROW,COL, e.g. 1,2"}),
        (("--max-terms",), {"type": int, "default": 16}),
    ),
    "handout": HANDOUT_ARGUMENTS,
}


def _add_export(sub) -> None:
    p = _session_command(sub, "export")
    p.add_argument(
        "--stage",
        default="weights",
        help=f"a stage, a comma list, or 'all' (default weights): {', '.join(STAGE_NAMES)}",
    )
    p.add_argument("--head", default="all", help="a head, a comma list such as 0,2, or 'all'")
    p.add_argument(
        "--format", default="png", help="comma list of png, svg, pdf, csv, npy, npz (default png)"
    )
    p.add_argument(
        "--out",
        default=".",
        metavar="DIR",
        help="folder to write into (its last part is created if missing)",
    )
    p.add_argument("--size", default="1200x900", help="picture size in pixels, WxH")
    p.add_argument("--dpi", default="150", help="picture resolution (default 150)")
    cmap_help = "colour map, e.g. viridis, magma, CET-D1 (default: viridis; CET-D1 for scores)"
    p.add_argument("--cmap", default=None, help=cmap_help)
    p.add_argument(
        "--scale",
        choices=("linear", "row", "log"),
        default="linear",
        help="colour scale of the weights: linear 0..1, row (each row against its maximum), log",
    )
    for flag, text, kind in (
        (
            "--values",
            "write the numbers in the cells (default: when cells are not blocks, up to 24x24)",
            _ON_OFF,
        ),
        ("--decimals", "decimals in cells and CSV files (default: each stage's)", _DECIMALS),
        ("--grid", "also draw all heads in one picture, <stage>_grid.png", _ON_OFF),
    ):
        p.add_argument(flag, default=None, help=text, **kind)


def parse_command(argv: list[str]) -> argparse.Namespace:
    """``argv`` (a sub-command and its arguments) parsed; an argument the command does not take
    is refused by that command's parser, so the error names the command."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def build_parser() -> OneLineParser:
    """The parser for the sub-commands (compute, explain, export, examples); its ``commands``
    maps each sub-command to its own parser."""
    parser = OneLineParser(prog=PROG, description="Attention Explorer command line")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _session_command(sub, "compute")
    _session_command(sub, "explain")
    _add_export(sub)
    sub.add_parser("examples", **_TEXTS["examples"])
    _add_model(sub)
    sub.add_parser("schema", **_TEXTS["schema"])
    add_sweep_parser(sub)
    _session_command(sub, "handout")
    add_causal_parsers(sub)
    parser.commands = dict(sub.choices)
    return parser


def _add_model(sub) -> None:
    p = sub.add_parser("model", **_TEXTS["model"])
    p.add_argument(
        "--model",
        required=True,
        metavar="DIR_OR_ID",
        help="a folder with config.json, model.safetensors, tokenizer.json, or a hub id "
        "(e.g. all-MiniLM-L6-v2) found locally or downloaded",
    )
    p.add_argument("--text", required=True, help="the sentence the model reads")
    p.add_argument("--layer", type=int, default=0, help="which layer, from 0 (default 0)")
    p.add_argument("--out", metavar="SESSION.json", help="write the session file here")
    p.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    p.add_argument(
        "--device", default="cpu", help="cpu (default), or with --backend torch: cuda, cuda:N, mps"
    )


def build_gui_parser() -> OneLineParser:
    """The parser for launching the window."""
    parser = OneLineParser(
        prog=PROG,
        description="See and edit every stage of self-attention. "
        f"Commands: {', '.join(COMMANDS)} (try '{PROG} compute --help').",
    )
    parser.add_argument("session", nargs="?", help="a session .json file to open")
    parser.add_argument("--example", help="open a worked example by name")
    parser.add_argument("--self-test", action="store_true", help="check the install and exit")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    return parser
