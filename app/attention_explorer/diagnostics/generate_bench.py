"""Benchmark of generation over a KV cache (issue 30 item 5): one decode step against
transformers' decode step with its cache, and 64 greedy steps of tiny-induction.

    python -m attention_explorer.diagnostics.generate_bench [--shape qwen2.5-0.5b]
        [--cache 512] [--repeat 5] [--dir FOLDER]

**Decode step**: a random bf16 checkpoint with Qwen2.5-0.5B's shapes (24 layers, 14 query
heads sharing 2 key/value heads of 64, d_model 896, d_ff 4864, a 151,936-word tied table;
:mod:`.scale_shapes`, written by :func:`.llama_scale_bench.write_checkpoint`), read in
float32 on the CPU by both. Each layer's cache is filled with ``--cache`` random positions
(the same numbers for both), then one token at position ``--cache`` goes through every layer
to its logits: ours is :func:`~attention_explorer.generation.loop.forward_new` (what each
step of ``ae.generate`` runs), theirs ``model(token, cache=cache)`` under
``torch.no_grad`` with a ``DynamicCache``; both caches are cut back to ``--cache`` positions
after each step. Medians of ``--repeat`` after one warm step, in this one process, BLAS and
torch at their own thread counts. The cache's bytes are the arrays' (ours: the keys and values
``ae.generate`` returns would hold; theirs: the tensors of the DynamicCache).

**tiny-induction**: 64 greedy steps of ``ae.generate`` on the shipped 2-layer GPT-2, as four
generations of 16 steps after an 8-word prompt (the model has 24 positions), prefill and
tokenizing included; transformers' ``generate(do_sample=False)`` on the same ids beside it.

``--shape smoke`` (d_model 32, 2 layers) is what the smoke test runs. The calibration line
(:mod:`.calibration`) comes first. Speed is reported here, never asserted in tests.

Measured on the shared 2-core machine (calibration: python 29.7 ms, numpy 72.3 ms, total
101.9 ms), float32, 55 s in all with the checkpoint written::

  | measure | ours | transformers | ratio | note |
  |---|---|---|---|---|
  | decode step, qwen2.5-0.5b, cache 512 | 1138.3 ms | 1435.3 ms | 0.79 | 12288 KiB (theirs 12288) |
  | tiny-induction, 64 steps (4 x 16) | 61.5 ms | 1253.1 ms | 0.05 | with prefills |

A 0.5B decode step reads every weight once (2 GB in float32, the 151,936 x 896 output table
545 MB of it), so both are bound by memory bandwidth on a busy machine.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

TINY = Path(__file__).resolve().parents[3] / "resources" / "models" / "tiny-induction"
SMOKE = {
    "model_type": "qwen2",
    "architectures": ["Qwen2ForCausalLM"],
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 300,
    "max_position_embeddings": 512,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
    "hidden_act": "silu",
    "qkv_bias": True,
}


def shape_config(name: str) -> dict:
    """config.json values of shape ``name`` (``smoke`` or a :mod:`.scale_shapes` size)."""
    if name == "smoke":
        return dict(SMOKE)
    from attention_explorer.diagnostics.scale_shapes import SIZES

    return dict(SIZES[name])


def model_folder(name: str, root: Path) -> Path:
    """A random checkpoint of shape ``name`` under ``root`` (written once)."""
    from attention_explorer.diagnostics.llama_scale_bench import write_checkpoint

    folder = root / name
    if not (folder / "config.json").is_file():
        write_checkpoint(folder, shape_config(name))
    return folder


def _median(work, repeat: int) -> float:
    """Median seconds of ``work()`` over ``repeat`` runs after one warm run."""
    work()
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def random_cache(w, length: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per layer, keys and values ``[kv, length, d]`` float32 of a fixed seed."""
    rng = np.random.default_rng(seed)
    shape = (w.kv_heads, length, w.d_k)
    return [
        (rng.standard_normal(shape, np.float32), rng.standard_normal(shape, np.float32))
        for _ in range(w.n_layers)
    ]


def ours_step(folder: Path, cache: int, repeat: int) -> tuple[float, int]:
    """(median seconds of one decode step, the cache's bytes) with ae's generation step."""
    from attention_explorer.generation.loop import embed_at, forward_new, held
    from attention_explorer.generation.policy import CachePolicy
    from attention_explorer.generation.step import new_caches
    from attention_explorer.pretrained.open_model import load_model, model_backend

    loaded = load_model(folder)
    w = held(loaded, "float32", model_backend("numpy"))
    caches = new_caches(w, cache + 1, np.zeros(1, np.float32))
    for held_cache, (k, v) in zip(caches, random_cache(w, cache)):
        held_cache.keys[:, :cache], held_cache.values[:, :cache] = k, v
    policy, dtype = CachePolicy(), np.dtype("float32")

    def step():
        for c in caches:
            c.length = cache
        forward_new(w, embed_at(w, 7, cache, dtype), caches, policy)

    seconds = _median(step, repeat)
    nbytes = sum(c.keys[:, :cache].nbytes + c.values[:, :cache].nbytes for c in caches)
    for key in [k for k in loaded.cast if isinstance(k, tuple) and k[0] == "generation"]:
        del loaded.cast[key]  # the held float32 weights: transformers loads its own next
    return seconds, nbytes


def theirs_step(folder: Path, cache: int, repeat: int) -> tuple[float, int]:
    """(median seconds of one decode step, the cache's bytes) with transformers."""
    import torch
    import transformers
    from transformers import DynamicCache

    from attention_explorer.pretrained.open_model import load_model

    w = load_model(folder).weights
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    past = DynamicCache(config=model.config)
    for layer, (k, v) in enumerate(random_cache(w, cache)):
        past.update(torch.from_numpy(k)[None], torch.from_numpy(v)[None], layer)
    token = torch.tensor([[7]])

    def cut():  # back to ``cache`` positions (transformers 5: crop(-n) removes n)
        extra = past.get_seq_length() - cache
        if extra > 0:
            past.crop(-extra)

    def step():
        cut()
        with torch.no_grad():
            model(token, cache=past, use_cache=True)

    seconds = _median(step, repeat)
    cut()
    nbytes = sum(entry.keys.numel() * entry.keys.element_size() * 2 for entry in past.layers)
    return seconds, nbytes


def tiny_steps(repeat: int) -> tuple[float, float | None]:
    """(seconds of 64 greedy steps of ae.generate on tiny-induction, transformers' time)."""
    import attention_explorer as ae
    from attention_explorer.pretrained.open_model import load_model

    words = [w for w in load_model(TINY).tokenizer.get_vocab() if not w.startswith("[")]
    prompts = [" ".join(sorted(words)[k : k + 8]) for k in (0, 4, 8, 12)]
    ours = _median(lambda: [ae.generate(TINY, p, 16) for p in prompts], repeat)
    try:
        import torch
        from transformers import GPT2LMHeadModel
    except ImportError:
        return ours, None
    model = GPT2LMHeadModel.from_pretrained(TINY).eval()
    ids = [torch.tensor([load_model(TINY).tokenize(p).ids]) for p in prompts]

    def theirs():
        with torch.no_grad():
            for i in ids:
                model.generate(
                    i,
                    attention_mask=torch.ones_like(i),
                    do_sample=False,
                    max_new_tokens=16,
                    min_new_tokens=16,
                    pad_token_id=0,
                )

    return ours, _median(theirs, repeat)


def table(rows: list[tuple]) -> str:
    """(what, ours s, transformers s | None, note) rows as a Markdown table (ratio: ours /
    transformers' time; note: the cache's bytes, ours and theirs)."""
    lines = ["| measure | ours | transformers | ratio | note |", "|---|---|---|---|---|"]
    for what, ours, theirs, note in rows:
        ratio = "-" if theirs is None else f"{ours / theirs:.2f}"
        them = "-" if theirs is None else f"{theirs * 1e3:.1f} ms"
        lines.append(f"| {what} | {ours * 1e3:.1f} ms | {them} | {ratio} | {note} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the calibration line and the table."""
    from attention_explorer.diagnostics.calibration import calibration_line

    parser = argparse.ArgumentParser(prog="generate_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--shape", default="qwen2.5-0.5b")
    parser.add_argument("--cache", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", default=None, help="where the random checkpoint is kept")
    args = parser.parse_args(argv)
    print(calibration_line())
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.dir) if args.dir else Path(scratch)
        folder = model_folder(args.shape, root)
        ours, our_bytes = ours_step(folder, args.cache, args.repeat)
        theirs, their_bytes = theirs_step(folder, args.cache, args.repeat)
    tiny, tiny_theirs = tiny_steps(max(1, args.repeat // 2))
    rows = [
        (
            f"decode step, {args.shape}, cache {args.cache}",
            ours,
            theirs,
            f"{our_bytes / 2**10:.0f} KiB (theirs {their_bytes / 2**10:.0f})",
        ),
        ("tiny-induction, 64 steps (4 x 16)", tiny, tiny_theirs, "with prefills"),
    ]
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
