"""Benchmark: the engine against a hand-written reference that computes the same stages.

Run ``python -m attention_explorer.diagnostics.bench`` (all sizes), ``--quick`` (a tiny run) or
``--sizes 4,16`` (choose n). For each n (h = 8 heads; d_model = 64 below n = 256, 512 from
n = 256; causal mask; float32) it times :func:`attention_explorer.engine.compute` on numpy,
torch cpu and (when present) torch cuda, next to a reference written directly in numpy or
torch that computes and keeps the same stages: Q/K/V projections, scores, scaled, masked,
softmax weights, head outputs, concat and output, all returned as numpy arrays as the engine
does. The reference is what a careful person writes by hand: batched heads, numpy's softmax
with the exponential and the division done in place, torch's own fused ``torch.softmax``; it
does no input validation and builds no Trace. Times are medians of several repeats (fewer for
large n), engine and reference runs interleaved so that a noisy machine affects both alike.
Small n is dominated by Python overhead (validation, config resolution, the Trace), so the
ratio there says more about fixed cost than about the arithmetic.

Peak memory: for numpy it is the peak of memory traced by ``tracemalloc`` during one extra
call (numpy reports its array buffers to tracemalloc); torch cpu allocations are invisible to
tracemalloc, so torch cpu shows ``n/a``; cuda shows ``torch.cuda.max_memory_allocated``.

A second set of rows times "one head, weights only" (``compute(..., heads=[0],
stages={"weights"})``) at the largest n against a reference computing just that head's
weights; the goal there is under 100 ms on torch cpu. The goal everywhere is engine /
reference <= 1.2. Timings are printed, never asserted. The last line calibrates the machine
(:mod:`attention_explorer.diagnostics.calibration`): compare runs on different machines by it; it
ends with the load averages, since other programs running beside the benchmark slow it unevenly.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attention_explorer.core.stages import CATALOGUE
from attention_explorer.diagnostics.calibration import calibration_line
from attention_explorer.engine import AttentionConfig, AttentionInputs, Backend
from attention_explorer.engine.backend import torch_installed
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.document import SessionData

DEFAULT_SIZES = (4, 16, 64, 256, 1024, 4096)
HEADS = 8
RATIO_GOAL = 1.2
ONE_HEAD_GOAL_S = 0.100


@dataclass
class Row:
    """One line of the table."""

    case: str
    n: int
    backend: str
    engine_s: float
    reference_s: float
    engine_peak: int | None
    reference_peak: int | None
    max_diff: float

    @property
    def ratio(self) -> float:
        """Engine time divided by reference time."""
        return self.engine_s / self.reference_s if self.reference_s > 0 else float("inf")


def make_case(n: int, seed: int = 0) -> tuple[AttentionConfig, AttentionInputs]:
    """A causal projection-mode case with ``n`` tokens and random float64 weights."""
    d_model = 64 if n < 256 else 512
    rng = np.random.default_rng(seed)
    config = AttentionConfig(mode="projection", heads=HEADS, d_model=d_model, mask="causal")
    inputs = AttentionInputs(
        X=rng.normal(size=(n, d_model)),  # [n, d_model]
        W_Q=rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),  # [d_model, h*d_k]
        W_K=rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),  # [d_model, h*d_k]
        W_V=rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),  # [d_model, h*d_v]
        W_O=rng.normal(size=(d_model, d_model)) / np.sqrt(d_model),  # [h*d_v, d_model]
    )
    return config, inputs


# -- hand-written references ----------------------------------------------------------------
#: The stages both references return, in pipeline order (the order of their ``every`` tuples):
#: the catalogue's, less the positional, rotary and cross-attention inputs they do not use.
#: The stages of plain causal softmax attention (no positions, QK-norm, rotation, cap or sink).
REFERENCE_STAGES = tuple(
    s
    for s in CATALOGUE
    if s
    not in (
        "positions",
        "X_pos",
        "X_kv",
        "Q_rot",
        "K_rot",
        "Q_normed",
        "K_normed",
        "capped",
        "sink_weight",
    )
)


def reference_numpy(
    inputs: AttentionInputs, config: AttentionConfig, one_head: bool = False
) -> dict[str, np.ndarray]:
    """Causal multi-head attention in plain numpy float32, keeping every stage.

    With ``one_head`` only head 0's weights are computed and returned.
    """
    f32 = np.float32
    n, d_model = inputs.X.shape
    h = 1 if one_head else config.heads
    dk = config.head_dim
    X = inputs.X.astype(f32)  # [n, d_model]
    allowed = np.tril(np.ones((n, n), dtype=bool))  # [n, n]
    factor = 1.0 / np.sqrt(dk)

    def project(W):
        return (X @ W[:, : h * dk].astype(f32)).reshape(n, h, dk).transpose(1, 0, 2)  # [h,n,dk]

    Q, K = project(inputs.W_Q), project(inputs.W_K)
    scores = Q @ K.transpose(0, 2, 1)  # [h, n, n]
    scaled = scores * f32(factor)  # [h, n, n]
    masked = np.where(allowed, scaled, f32(-np.inf))  # [h, n, n]
    weights = masked - masked.max(axis=-1, keepdims=True)  # [h, n, n]
    np.exp(weights, out=weights)  # in place, as a careful hand-written softmax does
    weights /= weights.sum(axis=-1, keepdims=True)  # [h, n, n]
    if one_head:
        return {"weights": weights}
    V = project(inputs.W_V)  # [h, n, d_v]
    head_outputs = weights @ V  # [h, n, d_v]
    concat = head_outputs.transpose(1, 0, 2).reshape(n, -1)  # [n, h*d_v]
    output = concat @ inputs.W_O.astype(f32)  # [n, d_model]
    every = (X, Q, K, V, scores, scaled, allowed, masked, weights, head_outputs, concat, output)
    return dict(zip(REFERENCE_STAGES, every, strict=True))


def reference_torch(
    inputs: AttentionInputs, config: AttentionConfig, device: str, one_head: bool = False
) -> dict[str, np.ndarray]:
    """The same computation in torch on ``device``, every stage returned as numpy."""
    import torch

    n, d_model = inputs.X.shape
    h = 1 if one_head else config.heads
    dk = config.head_dim

    def put(a):
        return torch.as_tensor(a, dtype=torch.float32, device=device)

    X = put(inputs.X)  # [n, d_model]
    allowed = torch.ones((n, n), dtype=torch.bool, device=device).tril()  # [n, n]
    factor = 1.0 / float(np.sqrt(dk))

    def project(W):
        return (X @ put(W[:, : h * dk])).reshape(n, h, dk).permute(1, 0, 2)  # [h, n, dk]

    Q, K = project(inputs.W_Q), project(inputs.W_K)
    scores = Q @ K.transpose(1, 2)  # [h, n, n]
    scaled = scores * factor  # [h, n, n]
    masked = torch.where(allowed, scaled, -torch.inf)  # [h, n, n]
    weights = torch.softmax(masked, dim=-1)  # [h, n, n], torch's fused softmax
    if one_head:
        return {"weights": weights.cpu().numpy()}
    V = project(inputs.W_V)  # [h, n, d_v]
    head_outputs = weights @ V  # [h, n, d_v]
    concat = head_outputs.permute(1, 0, 2).reshape(n, -1)  # [n, h*d_v]
    output = concat @ put(inputs.W_O)  # [n, d_model]
    every = (X, Q, K, V, scores, scaled, allowed, masked, weights, head_outputs, concat, output)
    return {k: v.cpu().numpy() for k, v in zip(REFERENCE_STAGES, every, strict=True)}


# -- measuring -------------------------------------------------------------------------------
def _sync(backend: Backend) -> None:
    if backend.device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(backend.device)


def _time_pair(
    engine: Callable[[], object], reference: Callable[[], object], repeats: int, sync
) -> tuple[float, float]:
    """Median seconds per call of each, runs interleaved, after one warm-up call each.

    Fast calls are timed in batches lasting at least ~20 ms (per-call time = batch / calls),
    so timer resolution and one-off hiccups matter less.
    """
    engine()
    reference()
    sync()
    started = time.perf_counter()
    reference()
    sync()
    once = max(time.perf_counter() - started, 1e-7)
    number = max(1, min(1000, int(0.02 / once)))
    engine_times, reference_times = [], []
    for _ in range(repeats):
        for fn, times in ((engine, engine_times), (reference, reference_times)):
            gc.collect()
            started = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            times.append((time.perf_counter() - started) / number)
    return statistics.median(engine_times), statistics.median(reference_times)


def _peak(fn: Callable[[], object], backend: Backend) -> int | None:
    """Peak bytes allocated during one call (see the module docstring for what is measured)."""
    gc.collect()
    if backend.name == "numpy":
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    if backend.device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(backend.device)
        torch.cuda.reset_peak_memory_stats(backend.device)
        fn()
        torch.cuda.synchronize(backend.device)
        return int(torch.cuda.max_memory_allocated(backend.device))
    return None


def _repeats(n: int, quick: bool) -> int:
    if quick:
        return 3
    if n <= 256:
        return 9
    if n <= 1024:
        return 5
    return 3


def backends_to_run() -> list[Backend]:
    """numpy, then torch cpu and cuda:0 when torch (and a GPU) is there."""
    found = [Backend("numpy", "cpu")]
    if torch_installed():
        import torch

        found.append(Backend("torch", "cpu"))
        if torch.cuda.is_available():
            found.append(Backend("torch", "cuda:0"))
    return found


def measure(
    n: int, backend: Backend, quick: bool = False, one_head: bool = False, memory: bool = True
) -> Row:
    """Time (and measure memory of) the engine and the reference for one size and backend."""
    config, inputs = make_case(n)
    heads, stages = ([0], {"weights"}) if one_head else (None, None)
    data = SessionData(tokens=tuple(f"t{i}" for i in range(n)), config=config, inputs=inputs)

    def engine():
        return compute_session(data, backend, heads=heads, stages=stages)

    if backend.name == "numpy":

        def reference():
            return reference_numpy(inputs, config, one_head)
    else:

        def reference():
            return reference_torch(inputs, config, backend.device, one_head)

    trace, ref = engine(), reference()
    names = ("weights",) if one_head else ("weights", "head_outputs", "output")
    max_diff = max(float(np.max(np.abs(trace[name] - ref[name]))) for name in names)
    del trace, ref
    engine_s, reference_s = _time_pair(
        engine, reference, _repeats(n, quick), lambda: _sync(backend)
    )
    engine_peak = _peak(engine, backend) if memory else None
    reference_peak = _peak(reference, backend) if memory else None
    case = "one head, weights" if one_head else "full trace"
    return Row(case, n, backend.label, engine_s, reference_s, engine_peak, reference_peak, max_diff)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}" if seconds < 0.01 else f"{seconds * 1e3:.1f}"


def _mib(nbytes: int | None) -> str:
    return "n/a" if nbytes is None else f"{nbytes / 2**20:.1f}"


HEADER = (
    "case",
    "n",
    "backend",
    "engine ms",
    "ref ms",
    "ratio",
    "engine MiB",
    "ref MiB",
    "max|diff|",
    "goal",
)


def format_row(row: Row) -> tuple[str, ...]:
    """The row's cells as text; the goal column says ok, or how it misses."""
    goal = "ok" if row.ratio <= RATIO_GOAL else f"over {RATIO_GOAL}x"
    if row.case.startswith("one head") and row.backend == "torch cpu":
        met = row.engine_s < ONE_HEAD_GOAL_S
        goal += f"; <100 ms {'met' if met else 'MISSED'}"
    return (
        row.case,
        str(row.n),
        row.backend,
        _ms(row.engine_s),
        _ms(row.reference_s),
        f"{row.ratio:.2f}",
        _mib(row.engine_peak),
        _mib(row.reference_peak),
        f"{row.max_diff:.1e}",
        goal,
    )


def format_table(rows: Sequence[tuple[str, ...]]) -> str:
    """Plain-text columns, left-aligned text and right-aligned numbers."""
    table = [HEADER, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
    lines = []
    for r in table:
        cells = [
            c.ljust(w) if i in (0, 2, 9) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table; returns 0."""
    parser = argparse.ArgumentParser(prog="python -m attention_explorer.diagnostics.bench")
    parser.add_argument("--quick", action="store_true", help="n = 4, 16, three repeats")
    parser.add_argument("--sizes", help="comma-separated n values, e.g. 4,16")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(",") if s.strip())
    else:
        sizes = (4, 16) if args.quick else DEFAULT_SIZES
    backends = backends_to_run()
    print(
        f"attention_explorer.diagnostics.bench: h={HEADS}, causal, float32; "
        f"d_model 64 below n=256, 512 from n=256; backends: {', '.join(b.label for b in backends)}"
    )
    print(
        "times: median ms; ratio = engine/reference (goal <= 1.2); MiB: peak traced memory "
        "(numpy: tracemalloc, cuda: max_memory_allocated, torch cpu: not measurable)"
    )
    rows = []
    for n in sizes:
        for backend in backends:
            row = measure(n, backend, args.quick, memory=not args.no_memory)
            rows.append(format_row(row))
            print("  ".join(rows[-1]), file=sys.stderr, flush=True)
    one_head_n = max(sizes)
    for backend in backends:
        row = measure(one_head_n, backend, args.quick, one_head=True, memory=not args.no_memory)
        rows.append(format_row(row))
    print(format_table(rows))
    print(f"{calibration_line()}; {load_text()}")  # runs on other machines compare by it
    return 0


def load_text() -> str:
    """The load averages now (1, 5 and 15 minutes) and the cores: a table taken on a busy
    machine says so (e.g. ``load 0.4 0.3 0.2 on 2 cores``)."""
    cores = os.cpu_count() or 1
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):  # not on this system
        return f"load unknown on {cores} cores"
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {cores} cores"


if __name__ == "__main__":
    raise SystemExit(main())
