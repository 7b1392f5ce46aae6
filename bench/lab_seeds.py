"""The training lab's grader run, measured on the reference: per seed, the token accuracy
by length of the attention model and of the baseline trained on the same batches, the
accuracy of the attention model with its context zeroed (the encoder states replaced by
zeros at decoding: what a model that shortcuts its attention would keep), and the CPU
seconds and peak memory of the run.

It is the design of README "Training lab: what is next" run in one process (no
worker): the judge's task variant (a symbol substitution without fixed points, so
that an identity copy scores nothing), the judge's initial parameters, the batches,
Adam, then greedy decoding driven step by step. Thresholds for the grader must hold
on every seed with a margin.

    python bench/lab_seeds.py [--seeds 10] [--steps 300] [--max-len 12]
"""
import argparse
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.private.solutions import seq2seq_attention as ref  # noqa: E402


def derangement(n, g):
    """A permutation of n symbols with no fixed point (an identity copy then scores 0)."""
    while True:
        p = torch.randperm(n, generator=g)
        if not bool((p == torch.arange(n)).any()):
            return p


def decode(encoder, decoder, src, lengths, n_steps, zero_context=False):
    """Greedy decoding, one decoder call per step, as the judge would drive it."""
    with torch.no_grad():
        states, state = encoder(src, lengths)
        if zero_context and states is not None:
            states = torch.zeros_like(states)
        mask = ref.length_mask(lengths, src.shape[1])
        token = torch.full((src.shape[0],), 1, dtype=torch.long)
        out = []
        for _ in range(n_steps):
            logits, state, _ = decoder(token, state, states, mask)
            token = logits.argmax(-1)
            out.append(token)
    return torch.stack(out, 1)


def accuracy(encoder, decoder, lengths, n_symbols, mapping, seed, zero_context=False, n=200):
    g = torch.Generator().manual_seed(seed)
    acc = {}
    for L in lengths:
        src, src_lengths, tgt, _ = ref.make_copy_batch(n, L, L, n_symbols, g, mapping)
        tokens = decode(encoder, decoder, src, src_lengths, L, zero_context)
        acc[L] = float((tokens == tgt[:, 1:L + 1]).double().mean())
    return acc


def run(seed, args):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    V = args.symbols + 3
    mapping = derangement(args.symbols, g)
    batches = [ref.make_copy_batch(args.batch, 1, args.max_len, args.symbols, g, mapping) for _ in range(args.steps)]
    out = {}
    for kind in ("attention", "baseline"):
        if kind == "attention":
            enc, dec = ref.Encoder(V, args.emb, args.hidden), ref.AttentionDecoder(V, args.emb, args.hidden, args.attn)
        else:
            enc, dec = ref.BaselineEncoder(V, args.emb, args.hidden), ref.BaselineDecoder(V, args.emb, args.hidden)
        opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=args.lr)
        start = time.process_time()
        for b in batches:
            ref.train_step(enc, dec, opt, *b)
        seconds = time.process_time() - start
        acc = accuracy(enc, dec, args.lengths, args.symbols, mapping, seed + 1000)
        out[kind] = (acc, seconds)
        if kind == "attention":
            out["zeroed"] = (accuracy(enc, dec, args.lengths, args.symbols, mapping, seed + 1000, zero_context=True), 0.0)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--max-len", type=int, default=12)
    p.add_argument("--symbols", type=int, default=8)
    p.add_argument("--emb", type=int, default=16)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--attn", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--lengths", type=int, nargs="+", default=[4, 8, 12])
    args = p.parse_args()
    torch.set_num_threads(1)  # as in the worker
    print(f"steps {args.steps} x batch {args.batch}, lengths 1..{args.max_len}, {args.symbols} symbols, "
          f"E={args.emb} H={args.hidden} A={args.attn}; chance {1 / args.symbols:.3f}")
    for s in range(args.seeds):
        out = run(s, args)
        row = "  ".join(f"{k} " + " ".join(f"{v:.2f}" for v in acc.values()) for k, (acc, _) in out.items())
        print(f"seed {s}: {row}  (CPU s: attention {out['attention'][1]:.1f}, baseline {out['baseline'][1]:.1f})",
              flush=True)
    print(f"peak MB: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")


if __name__ == "__main__":
    main()
