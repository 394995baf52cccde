"""Scale benchmark (issue 19 item 4): random checkpoints with the shapes of real 0.5B and 1B
models, in bfloat16 and sharded, with each family's exact tensor names, timed cold.

    python -m attention_explorer.diagnostics.llama_scale_bench [--sizes qwen2.5-0.5b,llama-3.2-1b]
        [--dir DIR] [--tokens 32] [--keep] [--reuse] [--window]

For each size it writes the checkpoint (random normal weights x 0.02, written in chunks so
generating it needs little memory; a byte-level tokenizer whose 256 pieces are the bytes),
then, in a fresh Python process, times loading it and the 32-token overview (every layer's
attention, ``model_run`` in float32) and reads the process's CPU seconds and peak RSS. The page
cache is warm (the files were just written): "cold" means a new process, not a cold disk.
``--window`` also times the app's own path in a fresh process with an offscreen window: the
Model dock's Load until the overview is drawn (``model_attention`` in float64, on its worker
thread), then opening the last layer. Prints one table row per size, the load average before
and after, and the calibration line.

Measured on the 2-core shared machine (load average 4.3 to 5.4; calibration 174 ms, about
1.5-2x slower than an idle run of it), after weights were left in the checkpoint and converted
a layer at a time (pretrained/checkpoint/stored.py):

| shapes | checkpoint (bf16) | cold load | overview | total (with import) | CPU | peak RSS |
|---|---|---|---|---|---|---|
| qwen2.5-0.5b | 0.92 GiB | 0.0 s | 5.5 s | 5.9 s | 1.4 s | 0.50 GiB (0.5x) |
| llama-3.2-1b | 2.30 GiB | 0.0 s | 7.8 s | 8.3 s | 3.7 s | 1.14 GiB (0.5x) |

| Model dock | window start | Load to overview drawn | open last layer | peak RSS |
|---|---|---|---|---|
| qwen2.5-0.5b | 2.4 s | 3.7 s | 1.4 s | 0.65 GiB (0.7x) |
| llama-3.2-1b | 4.2 s | 17.7 s | 2.8 s | 1.67 GiB (0.7x) |

Wall seconds follow the machine's load (the same 0.5B overview took 2.1 s at load 5.7 and
5.5 s at load 5.4; its CPU seconds stayed 1.4 s). Before (every weight widened to float64 at
load, then copied again to float32): 0.5B load 12.3 s + overview 7.5 s = 20.4 s at 4.58 GiB
(5.0x); the 1B was not run (about 12 GiB). Where the time goes now (cProfile, 0.5B float32
run): reading and widening bf16 layers 50%, the feed-forward's products 25%, the output head
(151,936 rows read in blocks) 20%. In float64 (the Model dock's overview) widening is twice
the memory traffic, hence the 1B's 17.7 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from attention_explorer.diagnostics.scale_shapes import SIZES, tensor_shapes

SHARD_BYTES = 400 * 2**20  # like save_pretrained's max_shard_size
TEXT = "The cat sat on the mat because it"  # 33 bytes: the first 32 are the tokens


def _bf16_chunks(rng: np.random.Generator, shape: tuple[int, ...], norm: bool):
    """Random bfloat16 bytes of ``shape`` (norm weights near 1), ~16M values at a time."""
    total = int(np.prod(shape))
    for lo in range(0, total, 1 << 24):
        count = min(1 << 24, total - lo)
        x = rng.standard_normal(count, dtype=np.float32) * np.float32(0.02)  # [count]
        if norm:
            x += np.float32(1.0)
        yield (x.view(np.uint32) >> 16).astype("<u2").tobytes()  # bf16: the high half


def _shard_plan(shapes: dict[str, tuple[int, ...]]) -> list[list[str]]:
    shards, size = [[]], 0
    for name, shape in shapes.items():
        nbytes = 2 * int(np.prod(shape))
        if shards[-1] and size + nbytes > SHARD_BYTES:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += nbytes
    return shards


def write_checkpoint(folder: Path, config: dict, seed: int = 0) -> int:
    """A random bf16 sharded checkpoint of ``config`` in ``folder``; returns its bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    shapes, rng = tensor_shapes(config), np.random.default_rng(seed)
    plan = _shard_plan(shapes)
    where, total = {}, 0
    for k, names in enumerate(plan, 1):
        file = f"model-{k:05d}-of-{len(plan):05d}.safetensors"
        header, offset = {}, 0
        for name in names:
            nbytes = 2 * int(np.prod(shapes[name]))
            header[name] = {
                "dtype": "BF16",
                "shape": list(shapes[name]),
                "data_offsets": [offset, offset + nbytes],
            }
            offset += nbytes
            where[name] = file
        raw = json.dumps(header).encode()
        raw += b" " * (-len(raw) % 8)
        with open(folder / file, "wb") as out:
            out.write(len(raw).to_bytes(8, "little") + raw)
            for name in names:
                for chunk in _bf16_chunks(rng, shapes[name], name.endswith("norm.weight")):
                    out.write(chunk)
        total += offset
    index = {"metadata": {"total_size": total}, "weight_map": where}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    saved = {k: v for k, v in config.items() if k != "qkv_bias"}
    (folder / "config.json").write_text(json.dumps({**saved, "torch_dtype": "bfloat16"}))
    write_tokenizer(folder)
    return total


def write_tokenizer(folder: Path) -> None:
    """A byte-level tokenizer.json whose 256 pieces are the bytes (no merges)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(folder / "tokenizer.json"))


_MEASURE = """
import json, resource, sys, time
t0 = time.perf_counter()
from attention_explorer.pretrained import load_model, model_run
def cpu():
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime
t1, c1 = time.perf_counter(), cpu()
loaded = load_model(sys.argv[1])
t2 = time.perf_counter()
run = model_run(loaded, sys.argv[2])
t3, c3 = time.perf_counter(), cpu()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "overview_s": t3 - t2,
    "cpu_s": c3 - c1, "tokens": len(run.ids),
    "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""

#: The app's own path, in a fresh process with an offscreen window: the Model dock's Load
#: (load_model, then model_attention in float64 on its worker thread) until the overview is
#: drawn, then a click on the last layer's first map (from_model of that layer).
_WINDOW = """
import json, os, resource, sys, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
t0 = time.perf_counter()
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from attention_explorer.ui.window.main_window import MainWindow
app = QApplication([])
settings = QSettings(sys.argv[3], QSettings.Format.IniFormat)
win = MainWindow(session=None, settings=settings)
win.model_dock.show(); win.show(); app.processEvents()
panel = win.model_panel
panel.model_edit.setText(sys.argv[1]); panel.text_edit.setText(sys.argv[2])
failed, seen = [], []
panel.loader.failed.connect(failed.append)
panel.loader.overview_ready.connect(lambda *a: seen.append("overview"))
panel.loader.layer_ready.connect(lambda *a: seen.append("layer"))
def wait(what, deadline=600):
    end = time.perf_counter() + deadline
    while what not in seen and not failed and time.perf_counter() < end:
        app.processEvents(); time.sleep(0.005)
    if what not in seen:
        raise SystemExit(failed[0] if failed else f"no {what} in {deadline} s")
t1 = time.perf_counter()
panel.load(); wait("overview"); app.processEvents()
t2 = time.perf_counter()
layers = panel.loaded.weights.n_layers
panel.open_head(layers - 1, 0); wait("layer"); app.processEvents()
t3 = time.perf_counter()
print(json.dumps({"start_s": t1 - t0, "window_s": t2 - t1, "last_layer_s": t3 - t2,
    "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
win.history.mark_clean(); win.live.shutdown(); os._exit(0)
"""


def _fresh(script: str, *args: str) -> dict:
    """``script`` run in a new Python process; its last line of JSON, or the error."""
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=False
    )
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(folder: Path, text: str) -> dict:
    """Cold (new process) load + overview of ``text``: seconds and peak RSS in bytes."""
    return _fresh(_MEASURE, str(folder), text)


def measure_window(folder: Path, text: str) -> dict:
    """The app's Model dock on ``folder`` in a new process: seconds from Load to the drawn
    overview, then to the last layer opened, and peak RSS in bytes."""
    with tempfile.TemporaryDirectory() as scratch:
        return _fresh(_WINDOW, str(folder), text, str(Path(scratch) / "settings.ini"))


def _row(name: str, size: int, m: dict) -> str:
    if "error" in m:
        return f"| {name} | {size / 2**30:.2f} GiB | {m['error']} | | | | |"
    total = m["import_s"] + m["load_s"] + m["overview_s"]
    return (
        f"| {name} | {size / 2**30:.2f} GiB | {m['load_s']:.1f} s | {m['overview_s']:.1f} s | "
        f"{total:.1f} s | {m['cpu_s']:.1f} s | "
        f"{m['peak_rss'] / 2**30:.2f} GiB ({m['peak_rss'] / size:.1f}x) |"
    )


def _window_row(name: str, size: int, m: dict) -> str:
    if "error" in m:
        return f"| {name} | {m['error']} | | | |"
    return (
        f"| {name} | {m['start_s']:.1f} s | {m['window_s']:.1f} s | {m['last_layer_s']:.1f} s | "
        f"{m['peak_rss'] / 2**30:.2f} GiB ({m['peak_rss'] / size:.1f}x) |"
    )


def _checkpoint(folder: Path, name: str, reuse: bool) -> int:
    """The checkpoint of size ``name`` in ``folder`` (written unless ``reuse`` finds one)."""
    index = folder / "model.safetensors.index.json"
    if reuse and index.is_file():
        return int(json.loads(index.read_text())["metadata"]["total_size"])
    return write_checkpoint(folder, SIZES[name])


def _load() -> str:
    try:
        return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load average unknown"


def main(argv: list[str] | None = None) -> None:
    """Write each size's checkpoint, measure it, print the table."""
    from attention_explorer.diagnostics.calibration import calibration_line

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="qwen2.5-0.5b")
    parser.add_argument("--dir", default=None)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--keep", action="store_true", help="keep the checkpoints written")
    parser.add_argument("--reuse", action="store_true", help="use checkpoints kept in --dir")
    parser.add_argument("--window", action="store_true", help="also time the app's window")
    args = parser.parse_args(argv)
    text = (TEXT * 8)[: args.tokens]  # one token per byte
    root = Path(args.dir or tempfile.mkdtemp(prefix="ae-scale-"))
    print(f"before: {_load()}")
    print(
        "| shapes | checkpoint (bf16) | cold load | overview | total (with import) "
        "| CPU (load + overview) | peak RSS |"
    )
    print("|---|---|---|---|---|---|---|")
    windows = []
    for name in args.sizes.split(","):
        folder = root / name
        size = _checkpoint(folder, name, args.reuse)
        print(_row(name, size, measure(folder, text)), flush=True)
        if args.window:
            windows.append(_window_row(name, size, measure_window(folder, text)))
        if not (args.keep or args.reuse):
            for path in folder.iterdir():
                path.unlink()
            folder.rmdir()
    if windows:
        print("\nThe app's Model dock (offscreen window, fresh process):\n")
        print("| shapes | window start | Load to overview drawn | open last layer | peak RSS |")
        print("|---|---|---|---|---|")
        print("\n".join(windows))
    print(f"after: {_load()}")
    print(calibration_line())


if __name__ == "__main__":
    main()
