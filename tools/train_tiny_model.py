"""Train ``resources/models/tiny-induction``: a 2-layer, attention-only GPT-2 that copies.

    .venv/bin/python tools/train_tiny_model.py            train and write the model folder
    .venv/bin/python tools/train_tiny_model.py --out DIR  write elsewhere (a trial run)

torch and transformers are needed here only; the app reads the result with numpy, safetensors
and tokenizers. The model is an ordinary ``GPT2LMHeadModel`` (config.json + model.safetensors)
with a word-level ``tokenizer.json`` (WordLevel + WhitespaceSplit, lowercased) of 24 animal
names; 1 head per layer, d_model 64, 24 positions.

What it learns (Olsson et al. 2022, "In-context learning and induction heads"): every training
sequence is a random prefix, then a run of 4..12 distinct random words repeated to the end.
Only the repeats are predictable (the loss is on those positions only), and only by copying: a
*previous-token head* in layer 0 writes "the word before me was A" into each position, and an
*induction head* in layer 1 looks, from the current word A, for the position whose previous
word was A and copies the word there. One head per layer leaves room for no other circuit (with
2 heads a layer the model copied through heads that look back 2-3 words instead). Training
stops at the first check (every 250 steps) where :func:`circuit_found` holds on fresh
test-style sequences: accuracy >= 0.97, each head's knockout <= 0.3, previous-token score of
head (0, 0) > 0.6, induction score of head (1, 0) > 0.6.

Both heads are learned from transformers' own random GPT-2 initialisation (``--init gpt2``:
weights normal with std 0.02, c_proj's 0.02 / sqrt(2 * layers), biases 0, LayerNorms 1 and 0;
nothing set by hand). The one thing that makes it train: layer 0
*waits* (``--layer0-delay`` 1000: its parameters get learning rate 0 for the first 1000 steps,
then the same warmup as the rest). Without the wait, layer 0's only head takes the copying job
itself (attending to earlier words and copying them: knocking it out leaves 0.03-0.08) and
cannot also become a previous-token head, so the model sits on the plateau or creeps along
another route with neither head's signature (accuracy 0.29-0.72 after 2000-4500 steps in every
such run below; the best, 0.72, has previous-token score 0.13, induction 0.00). With the wait,
layer 1 takes the copying job while layer 0 is still a random, near-uniform head (induction
score 0.18-0.22 by step 1000, presumably from the faint trace of the earlier words that a
near-uniform average carries); once released, the useful thing left for layer 0 is to
sharpen that signal into a previous-token head, and the two heads lock into the circuit
within 250 steps. A wait of 100 steps is already enough (5 of 5 seeds, done at step 250);
1000 is the shipped margin.

Attention-only, faithfully: ``n_inner`` is 4 and every MLP weight and bias is zero and frozen, so
each MLP adds exactly 0 (``c_proj(gelu(c_fc(x)))`` with ``c_proj`` zero); any GPT-2 reader
(transformers, the app) reads an ordinary GPT-2 whose MLPs contribute nothing. The loss is
computed by ``fast_logits`` over the model's own parameters (checked against transformers'
forward after training: difference 0.0).

The shipped run (defaults: seed 1234, batch 128, Adam lr 3e-3, betas (0.9, 0.98), 100 warmup
steps, gradient clip 1, no weight decay, layer 0 waits 1000 steps): it stopped at step 1250
after 68 s on the shared 2-core machine (load ~5), mean loss 0.25 over steps 1001-1250; on 256
fresh test sequences: copy accuracy 0.999, 0.10 with head (0, 0) knocked out, 0.00 with head
(1, 0) knocked out, previous-token score 0.74, induction score 0.98 (0.999 on 512 more).

Every run tried (the 28 from a random start and the earlier ones, seeded and not), with its
seed, steps, time, loss, accuracy, knockouts and scores: ``tools/train_tiny_model_runs.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from tiny_model_files import save

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "models" / "tiny-induction"

#: The words, one token each (24): short animal names, so a copied run reads like a list.
WORDS = (
    "cat dog fox owl bee cow pig hen ant bat elk yak "
    "lion bear wolf deer frog duck goat hare swan crab moth seal"
).split()
UNK = "[UNK]"
SEED = 1234
SEQ_LEN = 24  # T: tokens per sequence (n_positions)
MIN_REPEAT, MAX_REPEAT = 4, 12  # L: the length of the run that repeats


def sample_batch(rng: np.random.Generator, batch: int, seq_len: int = SEQ_LEN):
    """``batch`` training sequences: ids [batch, T] and the loss mask [batch, T].

    Each row: a random prefix of words that are not in the run, then a run of L distinct words
    (L random, 4..12) repeated to the end. ``mask[b, t]`` is True where ``ids[b, t + 1]`` is
    predictable by copying (from the run's second occurrence on). The random prefix
    and length leave no fixed offset to copy.
    """
    vocab = len(WORDS)
    ids = np.empty((batch, seq_len), dtype=np.int64)  # [B, T]
    mask = np.zeros((batch, seq_len), dtype=bool)  # [B, T]
    for b in range(batch):
        length = min(int(rng.integers(MIN_REPEAT, MAX_REPEAT + 1)), seq_len // 2)
        place = int(rng.integers(0, seq_len - 2 * length + 1))  # the random prefix
        order = rng.permutation(vocab)  # [V]: the run first, then words that are not in it
        ids[b, :place] = rng.choice(order[length:], place)
        ids[b, place:] = np.tile(order[:length], seq_len // length + 1)[: seq_len - place]
        mask[b, place + length : seq_len - 1] = True
    return ids, mask


def sample_text(rng: np.random.Generator, batch: int, seq_len: int = SEQ_LEN, gap: int = 0):
    """``batch`` sequences of random words (with replacement) in which one random stretch of
    4..12 words is repeated right after itself: ids [B, T] and mask [B, T] (predictable).
    Nearly every word is in each context, so "copy some earlier word" gains little."""
    vocab = len(WORDS)
    ids = rng.integers(0, vocab, size=(batch, seq_len))  # [B, T]
    mask = np.zeros((batch, seq_len), dtype=bool)  # [B, T]
    for b in range(batch):
        length = min(int(rng.integers(MIN_REPEAT, MAX_REPEAT + 1)), seq_len // 2)
        g = int(rng.integers(0, min(gap, seq_len - 2 * length) + 1))  # words between copies
        place = int(rng.integers(0, seq_len - 2 * length - g + 1))
        again = place + length + g
        ids[b, again : again + length] = ids[b, place : place + length]
        mask[b, again : again + length - 1] = True
    return ids, mask


def test_sequences(rng: np.random.Generator, count: int, seq_len: int = SEQ_LEN):
    """Sequences as tests/models/test_tiny_induction.py draws them: distinct prefix words, a run,
    the run once more, random words; ids [count, T] and mask [count, T] (copyable positions)."""
    vocab = len(WORDS)
    ids = rng.integers(0, vocab, size=(count, seq_len))  # [count, T]
    mask = np.zeros((count, seq_len), dtype=bool)  # [count, T]
    for b in range(count):
        run = int(rng.integers(MIN_REPEAT, MAX_REPEAT + 1))
        prefix = int(rng.integers(0, seq_len - 2 * run + 1))
        first = rng.permutation(vocab)[: prefix + run]  # [p + L] distinct words
        ids[b, : prefix + run] = first
        ids[b, prefix + run : prefix + 2 * run] = first[prefix:]
        mask[b, prefix + run : prefix + 2 * run - 1] = True
    return ids, mask


def make_model(
    heads: int,
    layers: int,
    d_model: int,
    positions: int,
    previous: float = 0.0,
    init: str = "gpt2",
):
    """A fresh GPT-2 (torch) with its MLPs zeroed and frozen: attention only.

    ``init`` "gpt2": transformers' own random initialisation, untouched (the shipped model).
    "split": the earlier hand-made start of :func:`start_point` (token vectors in the first
    half of the dimensions, sinusoidal positions in the second; with ``previous`` > 0, layer
    0's W_Q and W_K a previous-token pattern of that strength), kept to reproduce the runs in
    the module docstring.
    """
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
        if init == "split":
            start_point(model, previous)
        for block in model.transformer.h:
            for p in (*block.mlp.parameters(), *block.ln_2.parameters()):
                p.requires_grad_(False)
            for p in block.mlp.parameters():
                p.zero_()
    return model


def start_point(model, previous: float) -> None:
    """Token vectors in dims [0, d/2), sinusoidal position vectors in [d/2, d) (Vaswani et
    al., frequencies pi k / (d/4 + 1)); with ``previous`` > 0, layer 0's W_Q is ``previous``
    times the rotation that turns position t's sinusoid into position t - 1's, and W_K is
    ``previous`` times the identity on the position dims, so q_t . k_j peaks at j = t - 1.
    Everything else (W_V, W_O of layer 0, all of layer 1, the token vectors) starts random."""
    import torch

    t = model.transformer
    d, n = t.wpe.weight.shape[1], t.wpe.weight.shape[0]
    half = d // 2
    t.wte.weight[:, half:] = 0
    freq = np.pi * np.arange(1, half // 2 + 1) / (half // 2 + 1)  # [d / 4]
    pos = np.arange(n)[:, None]  # [P, 1]
    table = np.zeros((n, d), dtype=np.float32)  # [P, d]
    table[:, half::2], table[:, half + 1 :: 2] = np.sin(pos * freq), np.cos(pos * freq)
    t.wpe.weight.copy_(torch.from_numpy(table * np.float32(0.02)))
    if previous <= 0:
        return
    w = t.h[0].attn.c_attn.weight  # [d, 3d]: x @ w = Q | K | V
    w[:, : 2 * d] = 0
    for i, om in enumerate(freq):
        s, c = half + 2 * i, half + 2 * i + 1  # the sine and cosine of one frequency
        w[s, s], w[c, s], w[s, c], w[c, c] = np.cos(om), -np.sin(om), np.sin(om), np.cos(om)
        w[s, d + s], w[c, d + c] = 1.0, 1.0
    w[:, : 2 * d] *= previous


def evaluate(model, rng: np.random.Generator, batch: int = 256):
    """On fresh test-style sequences: (copy accuracy, {(layer, head): accuracy with that head
    knocked out}, previous-token score [layers, heads], induction score [layers, heads]).

    Copy accuracy: the share of the predictable positions whose argmax is the copied word.
    Previous-token score: a head's mean weight on position i - 1. Induction score (Olsson et
    al.): its mean weight, at a repeated word, on the word after that word's first occurrence.
    """
    import torch

    ids, mask = test_sequences(rng, batch, model.config.n_positions)  # [B, T] each
    ids_t = torch.from_numpy(ids)

    def copied(logits) -> float:
        right = logits.argmax(-1).numpy()[:, :-1] == ids[:, 1:]  # [B, T - 1]
        return float(right[mask[:, :-1]].mean())

    model.set_attn_implementation("eager")
    with torch.no_grad():
        out = model(ids_t, output_attentions=True)
        cfg = model.config
        heads = [(layer, h) for layer in range(cfg.n_layer) for h in range(cfg.n_head)]
        knocked = {lh: copied(fast_logits(model, ids_t, knockout=lh)) for lh in heads}
    model.set_attn_implementation("sdpa")
    att = torch.stack(out.attentions, 1).numpy()  # [B, layers, heads, T, T]
    rows = np.arange(1, ids.shape[1])
    previous = att[:, :, :, rows, rows - 1].mean(axis=(0, 3))  # [layers, heads]
    b, t = np.nonzero(mask)
    first = np.array([np.flatnonzero(ids[i, :j] == ids[i, j])[0] for i, j in zip(b, t)])
    induction = att[b, :, :, t, first + 1].mean(0)  # [layers, heads]
    return copied(out.logits), knocked, previous, induction


def circuit_found(acc: float, knocked: dict, previous, induction) -> bool:
    """The shipping criteria (with margin over the test's): copies, both heads needed, and
    head (0, 0) a previous-token head, head (1, 0) an induction head."""
    return (
        acc >= 0.97
        and knocked[(0, 0)] <= 0.3
        and knocked[(1, 0)] <= 0.3
        and previous[0, 0] > 0.6
        and induction[1, 0] > 0.6
    )


def fast_logits(model, ids, rows=None, knockout=None):
    """The model's logits [B, T, V] (or [N, V] at ``rows``, a boolean [B, T]) computed
    directly from its parameters: the same GPT-2 arithmetic as ``model(ids)`` without the
    MLPs (zero and frozen: they add exactly 0) and without transformers' per-call overhead.
    ``check_fast_logits`` compares the two after training. ``knockout`` (layer, head): that
    head's output is zeroed before c_proj (its rows of W_O contribute nothing)."""
    import torch
    import torch.nn.functional as F

    t, cfg = model.transformer, model.config
    d, heads = cfg.n_embd, cfg.n_head
    b, n = ids.shape
    h = t.wte.weight[ids] + t.wpe.weight[:n]  # [B, T, d]
    for layer, block in enumerate(t.h):
        x = F.layer_norm(h, (d,), block.ln_1.weight, block.ln_1.bias, cfg.layer_norm_epsilon)
        qkv = torch.addmm(block.attn.c_attn.bias, x.reshape(b * n, d), block.attn.c_attn.weight)
        q, k, v = qkv.reshape(b, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)  # [B, H, T, dh]
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, H, T, dh]
        if knockout is not None and knockout[0] == layer:
            z = z.clone()
            z[:, knockout[1]] = 0
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


def train(args) -> tuple[object, list[tuple], float]:
    """Train until :func:`circuit_found` holds at a check (every ``log_every`` steps) or
    ``steps`` run out; return the model, the log rows (step, mean loss, accuracy, knocked-out
    accuracies, previous-token and induction scores) and the seconds."""
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    eval_rng = np.random.default_rng(args.seed + 1)
    model = make_model(
        args.heads,
        args.layers,
        args.d_model,
        args.seq_len,
        args.previous,
        args.init,
    )
    params = [p for p in model.parameters() if p.requires_grad]
    first = {id(p) for p in model.transformer.h[0].parameters()}
    groups = [
        {"params": [p for p in params if id(p) not in first], "delay": 0},
        {"params": [p for p in params if id(p) in first], "delay": args.layer0_delay},
    ]
    opt = torch.optim.AdamW(groups, lr=args.lr, weight_decay=args.weight_decay, betas=(0.9, 0.98))
    log, running, start = [], [], time.perf_counter()
    model.train()
    for step in range(args.steps):
        for group in opt.param_groups:  # linear warmup, then constant
            steps = step + 1 - group["delay"]  # layer 0 may wait while layer 1 starts
            group["lr"] = args.lr * min(1.0, max(0, steps) / args.warmup)
        if args.data == "text":
            ids, mask = sample_text(rng, args.batch, args.seq_len, args.gap)
        else:
            ids, mask = sample_batch(rng, args.batch, args.seq_len)
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
        if (step + 1) % args.log_every and step + 1 != args.steps:
            continue
        model.eval()
        acc, knocked, previous, induction = evaluate(model, eval_rng)
        model.train()
        log.append((step + 1, float(np.mean(running)), acc, knocked, previous, induction))
        running = []
        print(
            f"step {step + 1:5d}  {time.perf_counter() - start:4.0f} s  loss {log[-1][1]:.4f}  "
            f"copy accuracy {acc:.3f}  knocked out {[round(v, 2) for v in knocked.values()]}  "
            f"previous-token {np.round(previous.astype(float), 2).tolist()}  "
            f"induction {np.round(induction.astype(float), 2).tolist()}",
            flush=True,
        )
        if circuit_found(acc, knocked, previous, induction):
            break
    return model, log, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Train with the recorded settings (or those given) and write the model folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--heads", type=int, default=1)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=SEQ_LEN)
    parser.add_argument(
        "--previous", type=float, default=0.0, help="--init split only: layer 0's seeded strength"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--init", choices=("split", "gpt2"), default="gpt2")
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--gap", type=int, default=8, help="text: most words between copies")
    parser.add_argument(
        "--layer0-delay", type=int, default=1000, help="steps before layer 0 learns"
    )
    parser.add_argument("--data", choices=("runs", "text"), default="runs")
    parser.add_argument("--log-every", type=int, default=250)
    args = parser.parse_args(argv)
    model, log, seconds = train(args)
    model.eval()
    save(model, args.out, WORDS, UNK)
    gap = check_fast_logits(model, np.random.default_rng(args.seed + 3))
    print(f"direct forward against transformers: largest logit difference {gap:.1e}")
    final = evaluate(model, np.random.default_rng(args.seed + 2), 512)[0]
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"trained {log[-1][0]} steps in {seconds:.0f} s; held-out copy accuracy {final:.3f}")
    print(f"wrote {args.out} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
