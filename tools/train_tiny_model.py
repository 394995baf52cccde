"""Train ``resources/models/tiny-induction``: a 2-layer, attention-only GPT-2 that copies.

    .venv/bin/python tools/train_tiny_model.py            train and write the model folder
    .venv/bin/python tools/train_tiny_model.py --out DIR  write elsewhere (a trial run)

torch and transformers are needed here only; the app reads the result with numpy, safetensors
and tokenizers. The model is an ordinary ``GPT2LMHeadModel`` (config.json + model.safetensors)
with a word-level ``tokenizer.json`` (WordLevel + WhitespaceSplit, lowercased) of animal names.

What it should learn (Olsson et al. 2022, "In-context learning and induction heads"): every
training sequence holds a run of distinct random words that is repeated after a random prefix
and random gaps. Only the repeats are predictable, and only by copying: a *previous-token head*
in layer 0 writes "the word before me was A" into each position, and an *induction head* in
layer 1 looks, from the current word A, for the position whose previous word was A and copies
the word there. ``evaluate`` prints both signatures (previous-token score: weight on i - 1;
induction score: weight on the word after the earlier occurrence) at every log step.

Traps: a fixed repeat length lets a layer-0 head look back a fixed offset,
so the run length (4..12), the prefix and the gaps between copies (0..4 words) are all random;
and induction heads form after a loss plateau, so: 48 words, loss on the copyable positions
only, lr 1e-2 with warmup, up to 6 copies a sequence (more signal a step).

Attention-only, faithfully: ``n_inner`` is 4 and every MLP weight and bias is zero and frozen, so
each MLP adds exactly 0 (``c_proj(gelu(c_fc(x)))`` with ``c_proj`` zero); any GPT-2 reader
(transformers, the app) reads an ordinary GPT-2 whose MLPs contribute nothing. The loss is
computed by ``fast_logits`` over the model's own parameters (checked against transformers'
forward after training: difference 0.0).

Runs so far (T = 32, d_model 64, batch 64, 2 layers; copy accuracy on fresh single repeats;
times on a shared 2-core machine; rows 1-3 used one repeat and no gaps):

    heads  lr    copies  wpe start  seed  steps   accuracy  L0 prev  L1 induction  time
    1      1e-3  2       random     1234  4000    0.14      0.04     0.02          248 s (T=48)
    1      3e-3  2       random     1234  8000    0.21      -        -             281 s (T=48)
    1      3e-3  2       sinusoid   1234  6000    0.32      -        -             -
    1      1e-2  6       sinusoid   1234  10000   0.42      0.09     0.02          ~800 s
    2      1e-2  6       sinusoid   1234  8000    0.94      0.10/.15 0.06/.04      627 s
    2      1e-2  6       sinusoid   7     6000    0.97      0.13/.07 0.02/.02      421 s
    2      1e-2  6       random     1234  3250*   0.95      0.07/.10 0.09/.05      -
    2      1e-2  6       random     7     3250*   0.92      0.09/.13 0.05/.06      -

The 2-head runs jump from the plateau (loss 2.6 -> 0.5 between steps 2000 and 3000) to copying
well, but NOT through Olsson's circuit: layer 0's heads look back 2 and 3 words, and layer 1
attends to the word two (or three) after the earlier occurrence, whose layer-0 output says
which word followed it. The induction score (weight on the word right after) stays near 0.03,
so no checkpoint is shipped yet (* stopped early: the same shortcut, with or without the
sinusoidal start). One head per layer leaves only the textbook circuit, but it
had not left the plateau after 10,000 steps.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "models" / "tiny-induction"

#: The words, one token each (48): short animal names, so a copied run reads like a list.
WORDS = (
    "cat dog fox owl bee cow pig hen ant bat elk yak emu ram eel ape rat cod doe gnu "
    "lion bear wolf deer frog duck goat hare lamb mole mouse seal swan toad crab moth "
    "newt wasp hawk crow dove mule orca puma lynx ibex tiger zebra"
).split()
UNK = "[UNK]"
SEED = 1234
SEQ_LEN = 32  # T: tokens per training sequence
MIN_REPEAT, MAX_REPEAT = 4, 12  # L: the length of the run that repeats


def _row(rng: np.random.Generator, seq_len: int, copies: int, longest: int):
    """One sequence's ids [T] and mask [T] (see :func:`sample_batch`)."""
    vocab = len(WORDS)
    length = int(rng.integers(MIN_REPEAT, min(longest or MAX_REPEAT, seq_len // 2) + 1))
    order = rng.permutation(vocab)  # [V]: the run first, then words that are not in it
    run, others = order[:length], order[length:]
    ids = rng.choice(others, size=seq_len)  # [T] filler, never a word of the run
    mask = np.zeros(seq_len, dtype=bool)  # [T]
    place = int(rng.integers(0, seq_len - 2 * length + 1))  # the random prefix
    ids[:place] = rng.permutation(others)[:place]  # distinct words before the first run
    for copy in range(copies):
        ids[place : place + length] = run
        if copy:
            mask[place : place + length - 1] = True
        room = seq_len - place - 2 * length  # words to spare if one more copy comes
        if room < 0:
            break
        place += length + int(rng.integers(0, min(4, room) + 1))  # a random gap, 0..4 words
    return ids, mask


def sample_batch(
    rng: np.random.Generator, batch: int, seq_len: int = SEQ_LEN, copies: int = 2, longest: int = 0
):
    """``batch`` sequences with a repeated run: ids [batch, T] and the loss mask [batch, T].

    Each row: a random prefix of distinct words, a run of L distinct words (L random), then up
    to ``copies - 1`` more copies of the run, each after a random gap (0..4 words), as many as
    fit; the other words are never words of the run, so the earlier occurrences of a run word
    are all followed by the same word. ``mask[b, t]`` is True where ``ids[b, t + 1]`` is
    predictable by copying. The random prefix, length and gaps leave no fixed offset to copy.
    """
    rows = [_row(rng, seq_len, copies, longest) for _ in range(batch)]
    return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])  # [B, T] each


def make_model(heads: int, layers: int, d_model: int, positions: int, sinusoid: bool = False):
    """A fresh GPT-2 (torch) with its MLPs zeroed and frozen: attention only."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=len(WORDS) + 1,
        n_positions=positions,
        n_embd=d_model,
        n_layer=layers,
        n_head=heads,
        n_inner=4,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=len(WORDS),
        eos_token_id=len(WORDS),
    )
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        if sinusoid:
            model.transformer.wpe.weight.copy_(
                torch.from_numpy(sinusoid_positions(positions, d_model))
            )
        for block in model.transformer.h:
            for p in (*block.mlp.parameters(), *block.ln_2.parameters()):
                p.requires_grad_(False)
            for p in block.mlp.parameters():
                p.zero_()
    return model


def sinusoid_positions(positions: int, d_model: int, std: float = 0.02) -> np.ndarray:
    """Sinusoidal position vectors [positions, d_model] (Vaswani et al.), each entry of std
    ``std`` like GPT-2's own initialisation: only the starting point of the learned ``wpe``.

    An offset is a rotation of each sine-cosine pair, so "the position just before me" is one
    linear map for every position, and layer 0 finds its previous-token head early.
    """
    pos = np.arange(positions)[:, None]  # [P, 1]
    freq = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)  # [d / 2]
    table = np.zeros((positions, d_model), dtype=np.float32)  # [P, d]
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return table * np.float32(std * np.sqrt(2))


def evaluate(model, rng: np.random.Generator, batch: int = 256, longest: int = 0):
    """On fresh sequences with one repeat: (copy accuracy, previous-token score of each head,
    induction score of each head), the scores as [layers, heads] arrays.

    Copy accuracy: the share of the predictable positions whose argmax is the copied word.
    Previous-token score: a head's mean weight on position i - 1. Induction score (Olsson et
    al.): its mean weight, at a repeated word, on the word after that word's first occurrence.
    """
    import torch

    ids, mask = sample_batch(rng, batch, model.config.n_positions, 2, longest)  # [B, T] each
    model.set_attn_implementation("eager")
    with torch.no_grad():
        out = model(torch.from_numpy(ids), output_attentions=True)
    model.set_attn_implementation("sdpa")
    att = torch.stack(out.attentions, 1).numpy()  # [B, layers, heads, T, T]
    right = out.logits.argmax(-1).numpy()[:, :-1] == ids[:, 1:]  # [B, T - 1]
    rows = np.arange(1, ids.shape[1])
    previous = att[:, :, :, rows, rows - 1].mean(axis=(0, 3))  # [layers, heads]
    b, t = np.nonzero(mask)
    length = np.array([np.flatnonzero(ids[i, :j] == ids[i, j])[0] for i, j in zip(b, t)])
    induction = att[b, :, :, t, length + 1].mean(0)  # [layers, heads]
    return float(right[mask[:, :-1]].mean()), previous, induction


def accuracy(model, rng: np.random.Generator, batch: int = 256, longest: int = 0) -> float:
    """Share of the predictable positions whose argmax is the copied word (fresh sequences)."""
    return evaluate(model, rng, batch, longest)[0]


def fast_logits(model, ids, rows=None):
    """The model's logits [B, T, V] (or [N, V] at ``rows``, a boolean [B, T]) computed
    directly from its parameters: the same GPT-2 arithmetic as ``model(ids)`` without the
    MLPs (zero and frozen: they add exactly 0) and without transformers' per-call overhead.
    ``check_fast_logits`` compares the two after training."""
    import torch
    import torch.nn.functional as F

    t, cfg = model.transformer, model.config
    d, heads = cfg.n_embd, cfg.n_head
    b, n = ids.shape
    h = t.wte.weight[ids] + t.wpe.weight[:n]  # [B, T, d]
    for block in t.h:
        x = F.layer_norm(h, (d,), block.ln_1.weight, block.ln_1.bias, cfg.layer_norm_epsilon)
        qkv = torch.addmm(block.attn.c_attn.bias, x.reshape(b * n, d), block.attn.c_attn.weight)
        q, k, v = qkv.reshape(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)  # [B, H, T, dh]
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, H, T, dh]
        z = z.transpose(1, 2).reshape(b * n, d)  # [B * T, d]: the heads' concat
        h = h + torch.addmm(block.attn.c_proj.bias, z, block.attn.c_proj.weight).reshape(b, n, d)
    h = h if rows is None else h[rows]
    h = F.layer_norm(h, (d,), t.ln_f.weight, t.ln_f.bias, cfg.layer_norm_epsilon)
    return h @ t.wte.weight.T  # [B, T, V] or [N, V]


def check_fast_logits(model, rng: np.random.Generator) -> float:
    """The largest difference between ``fast_logits`` and transformers' own forward."""
    import torch

    ids = torch.from_numpy(sample_batch(rng, 8, model.config.n_positions)[0])
    with torch.no_grad():
        return float((fast_logits(model, ids) - model(ids).logits).abs().max())


def lr_at(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warmup to ``peak``, then cosine decay to a tenth of it."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(args) -> tuple[object, list[tuple[int, float, float]], float]:
    """Train; return the model, the log rows (step, mean loss, accuracy) and the seconds."""
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    eval_rng = np.random.default_rng(args.seed + 1)
    model = make_model(args.heads, args.layers, args.d_model, args.seq_len, args.sinusoid)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    log, running, start = [], [], time.perf_counter()
    model.train()
    for step in range(args.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        ids, mask = sample_batch(rng, args.batch, args.seq_len, args.copies, args.longest)
        ids_t = torch.from_numpy(ids)
        rows = torch.from_numpy(mask)  # [B, T]: predict ids[:, t + 1] where True
        logits = fast_logits(model, ids_t, rows)  # [N, V]
        targets = torch.roll(ids_t, -1, dims=1)[rows]  # [N]
        loss = torch.nn.functional.cross_entropy(logits, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        running.append(loss.item())
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            model.eval()
            acc, previous, induction = evaluate(model, eval_rng, 256, args.longest)
            model.train()
            log.append((step + 1, float(np.mean(running)), acc))
            running = []
            print(
                f"step {step + 1:5d}  loss {log[-1][1]:.4f}  copy accuracy {acc:.3f}  "
                f"previous-token {np.round(previous.astype(float), 2).tolist()}  "
                f"induction {np.round(induction.astype(float), 2).tolist()}",
                flush=True,
            )
    return model, log, time.perf_counter() - start


def save_tokenizer(folder: Path) -> None:
    """tokenizer.json: the words in id order, [UNK] last; lowercased, split on whitespace."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    vocab = {w: i for i, w in enumerate(WORDS)} | {UNK: len(WORDS)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token=UNK))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(folder / "tokenizer.json"))


def save(model, folder: Path) -> None:
    """config.json + model.safetensors + tokenizer.json in ``folder`` (nothing else)."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    for extra in ("generation_config.json",):
        (folder / extra).unlink(missing_ok=True)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    save_tokenizer(folder)


def main(argv: list[str] | None = None) -> int:
    """Train with the recorded settings (or those given) and write the model folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--steps", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=SEQ_LEN)
    parser.add_argument("--longest", type=int, default=MAX_REPEAT)
    parser.add_argument("--sinusoid", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=250)
    args = parser.parse_args(argv)
    model, log, seconds = train(args)
    model.eval()
    save(model, args.out)
    gap = check_fast_logits(model, np.random.default_rng(args.seed + 3))
    print(f"direct forward against transformers: largest logit difference {gap:.1e}")
    final = accuracy(model, np.random.default_rng(args.seed + 2), 512, args.longest)
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"trained {args.steps} steps in {seconds:.0f} s; held-out copy accuracy {final:.3f}")
    print(f"wrote {args.out} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
