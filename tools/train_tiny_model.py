"""Train ``resources/models/tiny-induction``: a 2-layer, attention-only GPT-2 that copies.

    .venv/bin/python tools/train_tiny_model.py            train and write the model folder
    .venv/bin/python tools/train_tiny_model.py --out DIR  write elsewhere (a trial run)

torch and transformers are needed here only; the app reads the result with numpy, safetensors
and tokenizers. The model is an ordinary ``GPT2LMHeadModel`` (config.json + model.safetensors)
with a word-level ``tokenizer.json`` (WordLevel + WhitespaceSplit, lowercased) of animal names.

What it learns (Olsson et al. 2022, "In-context learning and induction heads"): every training
sequence holds a run of distinct random words that is repeated once, after a random prefix.
Only the repeated half is predictable, and only by copying: a *previous-token head* in layer 0
writes "the word before me was A" into each position, and an *induction head* in layer 1 looks,
from the current word A, for the position whose previous word was A and copies the word there.

Two traps (issue 18, item 6):
- A fixed repeat length lets a layer-0 head look back a fixed offset instead; the repeat length
  (4..20 words) and the prefix (0..T - 2 L words) are both drawn at random for every sequence.
- Induction heads form after a loss plateau; a small vocabulary (48 words), one head per layer,
  no MLP, the loss on the predictable positions only, and lr 1e-3 with warmup make it short.

Attention-only, faithfully: ``n_inner`` is 4 and every MLP weight and bias is zero and frozen, so
each MLP adds exactly 0 (``c_proj(gelu(c_fc(x)))`` with ``c_proj`` zero); any GPT-2 reader
(transformers, the app) reads an ordinary GPT-2 whose MLPs contribute nothing.

Training record (seed, steps, loss every 250 steps, time): filled in from the run's log below.

TRAINING_LOG
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
SEQ_LEN = 48  # T: tokens per training sequence
MIN_REPEAT, MAX_REPEAT = 4, 20  # L: the length of the run that repeats
N_POSITIONS = 64


def sample_batch(rng: np.random.Generator, batch: int, seq_len: int = SEQ_LEN):
    """``batch`` sequences with a repeated run: ids [batch, T] and the loss mask [batch, T].

    Each row: a random prefix of p words, a run of L words, the same run again, random words to
    T. The prefix and the run are distinct words (so the earlier occurrence of the current word
    is unique). ``mask[b, t]`` is True where ``ids[b, t + 1]`` is predictable by copying.
    """
    vocab = len(WORDS)
    ids = rng.integers(0, vocab, size=(batch, seq_len))  # [B, T] random filler
    mask = np.zeros((batch, seq_len), dtype=bool)  # [B, T]
    for b in range(batch):
        length = int(rng.integers(MIN_REPEAT, MAX_REPEAT + 1))
        prefix = int(rng.integers(0, seq_len - 2 * length + 1))
        first = rng.permutation(vocab)[: prefix + length]  # [p + L] distinct words
        ids[b, : prefix + length] = first
        ids[b, prefix + length : prefix + 2 * length] = first[prefix:]
        mask[b, prefix + length : prefix + 2 * length - 1] = True
    return ids, mask


def make_model(heads: int, layers: int, d_model: int):
    """A fresh GPT-2 (torch) with its MLPs zeroed and frozen: attention only."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=len(WORDS) + 1,
        n_positions=N_POSITIONS,
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
        for block in model.transformer.h:
            for p in (*block.mlp.parameters(), *block.ln_2.parameters()):
                p.requires_grad_(False)
            for p in block.mlp.parameters():
                p.zero_()
    return model


def accuracy(model, rng: np.random.Generator, batch: int = 256) -> float:
    """Share of the predictable positions whose argmax is the copied word (fresh sequences)."""
    import torch

    ids, mask = sample_batch(rng, batch)
    with torch.no_grad():
        logits = model(torch.from_numpy(ids)).logits  # [B, T, V]
    predicted = logits.argmax(-1).numpy()[:, :-1]  # [B, T - 1]
    return float((predicted == ids[:, 1:])[mask[:, :-1]].mean())


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
    model = make_model(args.heads, args.layers, args.d_model)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    log, running, start = [], [], time.perf_counter()
    model.train()
    for step in range(args.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        ids, mask = sample_batch(rng, args.batch)
        ids_t = torch.from_numpy(ids)
        logits = model(ids_t).logits[:, :-1]  # [B, T - 1, V]
        losses = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), ids_t[:, 1:].reshape(-1), reduction="none"
        )  # [B * (T - 1)]
        m = torch.from_numpy(mask[:, :-1].reshape(-1))
        loss = losses[m].mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        running.append(loss.item())
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            model.eval()
            row = (step + 1, float(np.mean(running)), accuracy(model, eval_rng))
            model.train()
            log.append(row)
            running = []
            print(f"step {row[0]:5d}  loss {row[1]:.4f}  copy accuracy {row[2]:.3f}", flush=True)
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
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--heads", type=int, default=1)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=250)
    args = parser.parse_args(argv)
    model, log, seconds = train(args)
    model.eval()
    save(model, args.out)
    final = accuracy(model, np.random.default_rng(args.seed + 2), batch=512)
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"trained {args.steps} steps in {seconds:.0f} s; held-out copy accuracy {final:.3f}")
    print(f"wrote {args.out} ({size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
