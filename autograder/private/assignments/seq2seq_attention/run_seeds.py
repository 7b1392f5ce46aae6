"""The training lab's run in the grader, measured on the reference over seeds: per
seed, the token accuracy by length of the attention model and of the baseline
trained on the same batches, the attention model's accuracy with its encoder
states zeroed, its loss ratio, the CPU seconds of its training, and whether every
threshold of grading.yml's run (`assignments.seq2seq_attention.run`) holds; then the worst seed's margin to
each threshold. The grader's run uses grading.yml's seed; its thresholds must
hold with a margin on every one of these.

It runs the judge's own code (`training.py` here: the task, the judge-driven
decoding, the ablation, the baseline) with the reference trained in this process
(in the grader the worker trains the student's model; `bench/grade_one.py
--assignment seq2seq_attention` measures that). The bench that runs it:

    python bench/run_seeds.py --assignment seq2seq_attention [--seeds 10] [--first 0]
"""

import resource
import time

import torch

from . import training


def one_seed(s):
    t = training.task(s)
    start = time.process_time()
    losses, enc, dec = training.train_here(t, "attention")
    seconds = time.process_time() - start
    start = time.process_time()
    base = training.baseline_accuracy(s)
    base_seconds = time.process_time() - start
    acc = training.accuracy(enc, dec, t)
    zeroed = training.accuracy(enc, dec, t, zero_context=True)
    margins = {f"accuracy@{L}": acc[L] - a for L, a in s.min_accuracy}
    margins.update({f"gap@{L}": acc[L] - base[L] - g for L, g in s.min_gap})
    margins["zeroed"] = s.max_zeroed - zeroed[s.longest]
    ratio, _ = training.loss_ratio(t, enc, dec)
    margins["loss_ratio"] = s.max_loss_ratio - ratio
    return acc, base, zeroed, ratio, seconds, base_seconds, margins


def add_options(p):
    """This run's own options of the bench: none (grading.yml's settings)."""


def main(args, cfg):
    """Measure `args.seeds` seeds from `args.first`; 0 when every threshold held on each."""
    torch.set_num_threads(1)  # as in the worker
    s0 = training.settings(cfg)
    print(
        f"grading.yml run: {s0.steps} Adam steps x {s0.batch_size} sequences of 1..{s0.max_len}, "
        f"{s0.n_symbols} symbols (chance {1 / s0.n_symbols:.3f}), E={s0.emb_dim} H={s0.hidden_dim} "
        f"A={s0.attn_dim}, lr {s0.lr:g}; lengths {list(s0.eval_lengths)}; thresholds: accuracy "
        f"{dict(s0.min_accuracy)}, gap {dict(s0.min_gap)}, zeroed <= {s0.max_zeroed}, "
        f"loss ratio <= {s0.max_loss_ratio}"
    )
    worst, held = {}, 0
    for seed in range(args.first, args.first + args.seeds):
        s = training.settings(cfg, seed=seed)
        acc, base, zeroed, ratio, sec, base_sec, margins = one_seed(s)
        ok = all(m > 0 for m in margins.values())
        held += ok
        for k, m in margins.items():
            worst[k] = min(worst.get(k, m), m)
        fmt = lambda d: " ".join(f"{v:.2f}" for v in d.values())  # noqa: E731
        print(
            f"seed {seed}: attention {fmt(acc)}  baseline {fmt(base)}  zeroed {fmt(zeroed)}  "
            f"loss ratio {ratio:.2f}  (CPU s: attention {sec:.1f}, baseline {base_sec:.1f})  "
            f"{'all thresholds hold' if ok else 'A THRESHOLD FAILS'}",
            flush=True,
        )
    print(
        f"thresholds held on {held} of {args.seeds} seeds; worst margins: "
        + ", ".join(f"{k} {m:+.2f}" for k, m in worst.items())
    )
    print(f"peak MB of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
    return 0 if held == args.seeds else 1
