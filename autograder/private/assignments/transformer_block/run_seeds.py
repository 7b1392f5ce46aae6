"""The transformer lab's run in the grader (question training_run of transformer_block),
measured on the reference over seeds (docs/pages/transformer-contract.md, "The training
run in the grader"). The settings and thresholds are grading.yml `transformer_run`; the
task, the trainings and the judge's evaluation are the judge's own code
(`autograder.private.assignments.transformer_block.training`); this bench adds the figures the
judge does not check.

The task is reversal: `length` random symbols, SEP, the symbols reversed, trained as a
language model on every next token (the prompt's symbols are random: only a model that
reads ahead can predict them, which is what makes training without the mask show). Per
seed, the judge's parameters (the reference TransformerLM's initialisation under the
seed) and batches are drawn; the reference is trained as the
worker will train a student's model (`run_train_steps`: Adam, `next_token_loss`); the
trained parameters are evaluated here through the reference's forward pass
(`ablated_logits`, which is `TransformerLM.forward` with two switches) on sequences the
training never saw:

- accuracy: greedy decoding from the prompt (a_1 .. a_L, SEP), each step's argmax fed
  back: the answer's tokens are never in the input;
- positions: the same decoding without the positional encoding; a model that uses
  positions falls towards chance (1 / n_symbols): the check is the drop, accuracy
  minus accuracy with the encoding zeroed;
- the causal mask ("reads_future"): teacher-forced accuracy on the prompt's symbols after
  the first, with the mask removed. They are random: with the mask every model is at
  chance there ("prompt_masked", 1 / n_symbols); without it, a model trained without
  the mask copies each from the next position (it learned to, since that lowered its
  training loss on the prompt), and one trained with it does not;
- the loss ratio: the held-out loss over the answer, trained parameters over initial ones.

Why not "the predictions do not change without the mask": in teacher-forced evaluation
of whole sequences, removing the mask gives every position tokens it never saw in
training, so the predictions of a model trained with the mask change too ("agreement",
masked against unmasked argmax on the answer, 0.90 .. 1.00 for the reference). Computed
from the prefix only (greedy decoding, "greedy_unmasked"), the last position sees the
same tokens with or without the mask: with one layer nothing changes whatever the
parameters (an architectural fact, no check of training); with two the earlier positions
of the prefix see their own futures and the answers move a little. What training decides
is whether the model reads the future, and the prompt's random symbols show it. The
reference is above chance there without the mask (0.15 .. 0.41): its mirror lookup, run at
a prompt position, lands on the answer's copy of the same symbol, a quirk of reversal;
with the answer replaced by other symbols ("reads_future_misled") it falls (0.13 .. 0.33).
Also shown: "follows", the answers that write the (wrong) next token of such a sequence.

The same run is then made twice more with the same parameters and batches, the model
trained without the positional encoding ("no positions") and without the causal mask
("no mask"), both evaluated by the same judge: each must fail its own check (positions,
reads_future) on every seed. Also shown, not checked: the accuracy with the encoding
zeroed, teacher-forced accuracy with and without the mask on the answer, and greedy
decoding without the mask (each step sees the prefix only).

    OMP_NUM_THREADS=1 python bench/run_seeds.py --assignment transformer_block [--seeds 10] [--first 0] [--steps N] ...

(--steps and the other settings' options override grading.yml's, to try other settings.)
"""

import resource
import time
from dataclasses import fields, replace

import torch

from autograder.private.solutions import transformer_block as ref

from . import training

OVERRIDABLE = [f for f in fields(training.Settings) if f.name != "seed"]


# -- the figures the judge does not check --------------------------------------------------
@torch.no_grad()
def teacher_forced(model, tokens, positions=True, causal=True):
    """Argmax predictions of the answer's tokens from the true prefix: (N, L)."""
    L = (tokens.shape[1] - 1) // 2
    logits = ref.ablated_logits(model, tokens, positions=positions, causal=causal)  # (N, 2L + 1, V)
    return logits[:, L:-1].argmax(-1)  # (N, L): made at SEP .. the answer's second-to-last token


def misleading_future(t, tokens):
    """The evaluation sequences with the answer replaced by other symbols, a wrong one at every
    position: a model that reads the token after t writes it; one that reads the prompt does not."""
    s = t.settings
    g = torch.Generator().manual_seed(s.seed * 7919 + 1001)
    L = s.length
    shift = torch.randint(1, s.n_symbols, (tokens.shape[0], L), generator=g)  # (N, L): never 0
    wrong = tokens.clone()
    wrong[:, L + 1 :] = (tokens[:, L + 1 :] - 2 + shift) % s.n_symbols + 2  # (N, L): another symbol
    return wrong


def all_figures(t, state):
    """The judge's Outcome of a trained state, the other figures, and the margins to the thresholds."""
    s = t.settings
    model = training.load(t, training.checked_state(t, state))
    o = training.judge(t, model)
    tokens = training.eval_batch(t)
    L = s.length
    answer = tokens[:, L + 1 :]  # (N, L)
    masked_tf = teacher_forced(model, tokens)
    unmasked_tf = teacher_forced(model, tokens, causal=False)
    wrong = misleading_future(t, tokens)
    f = {
        "accuracy": o.accuracy,
        "zeroed": o.zeroed,
        "reads_future": o.reads_future,
        "reads_future_misled": training.prompt_accuracy(model, wrong, causal=False),
        "follows": float((teacher_forced(model, wrong, causal=False) == wrong[:, L + 1 :]).double().mean()),
        "prompt_masked": training.prompt_accuracy(model, tokens),
        "loss_ratio": o.loss_ratio,
        "tf_masked": float((masked_tf == answer).double().mean()),
        "tf_unmasked": float((unmasked_tf == answer).double().mean()),
        "agreement": float((masked_tf == unmasked_tf).double().mean()),
        "greedy_unmasked": float(
            (training.greedy(training.forward_of(model, causal=False), tokens) == answer).double().mean()
        ),
    }
    margins = {
        "accuracy": o.accuracy - s.min_accuracy,
        "positions": o.drop - s.min_positions_drop,
        "reads_future": s.max_reads_future - o.reads_future,
        "loss_ratio": s.max_loss_ratio - o.loss_ratio,
    }
    assert sorted(k for k, m in margins.items() if m < 0) == training.failed(s, o), "the margins and the judge disagree"
    return f, margins


OWN_CHECK = {"no positions": "positions", "no mask": "reads_future"}  # what each ablated training must fail


def one_seed(s):
    """{model: (figures, margins, training CPU s, judging CPU s)} for one seed."""
    t = training.task(s)
    out = {}
    for name, train in (
        ("reference", lambda: training.train_reference(t)),
        ("no positions", lambda: training.train_ablated(t, positions=False)),
        ("no mask", lambda: training.train_ablated(t, causal=False)),
    ):
        start = time.process_time()
        _, state = train()
        seconds = time.process_time() - start
        if name == "reference":  # the judge's forward with both switches on is the module's
            model, tokens = training.load(t, state), training.eval_batch(t)
            with torch.no_grad():
                assert torch.equal(model(tokens), ref.ablated_logits(model, tokens))
        start = time.process_time()
        f, margins = all_figures(t, state)
        out[name] = (f, margins, seconds, time.process_time() - start)
    return out


def add_options(p):
    """This run's own options of the bench: each setting, overriding grading.yml's."""
    for f in OVERRIDABLE:
        p.add_argument(f"--{f.name.replace('_', '-')}", type=float if f.type in (float, "float") else int, default=None)


def main(args, cfg):
    """Measure `args.seeds` seeds from `args.first`; 0 when the reference held and each ablation
    failed its own check on every one."""
    torch.set_num_threads(1)  # as in the worker
    overrides = {f.name: getattr(args, f.name) for f in OVERRIDABLE if getattr(args, f.name) is not None}
    base = training.settings(cfg, **overrides)
    print(
        f"grading.yml transformer_run{' with ' + str(overrides) if overrides else ''}: reversal of {base.length} of "
        f"{base.n_symbols} symbols (chance {base.chance:.3f}); {base.steps} Adam steps x {base.batch_size}, lr {base.lr:g}; "
        f"sizes {base.sizes}; {base.eval_sequences} evaluation sequences; thresholds: accuracy >= {base.min_accuracy}, "
        f"drop with positions zeroed >= {base.min_positions_drop}, prompt accuracy without the mask <= {base.max_reads_future}, "
        f"loss ratio <= {base.max_loss_ratio}",
        flush=True,
    )
    n = args.seeds
    held, worst, ranges = 0, {}, {}
    own_failed = dict.fromkeys(OWN_CHECK, 0)
    own_worst = {}  # the ablated models' smallest distance past their own check's threshold
    train_s, judge_s = [], []
    for seed in range(args.first, args.first + n):
        for name, (figures, margins, seconds, judging) in one_seed(replace(base, seed=seed)).items():
            failed = sorted(k for k, m in margins.items() if m < 0)
            if name == "reference":
                held += not failed
                train_s.append(seconds)
                judge_s.append(judging)
                for k, m in margins.items():
                    worst[k] = min(worst.get(k, m), m)
                verdict = "all thresholds hold" if not failed else "A THRESHOLD FAILS: " + ", ".join(failed)
            else:
                own = OWN_CHECK[name]
                own_failed[name] += own in failed
                own_worst[name] = min(own_worst.get(name, -margins[own]), -margins[own])
                verdict = ("fails " + ", ".join(failed)) if failed else "PASSES EVERY CHECK"
                if own not in failed:
                    verdict += f" (NOT ITS OWN CHECK, {own})"
            for k, v in figures.items():
                lo, hi = ranges.get((name, k), (v, v))
                ranges[(name, k)] = (min(lo, v), max(hi, v))
            print(
                f"seed {seed} {name:>12}: "
                + "  ".join(f"{k} {v:.3f}" for k, v in figures.items())
                + f"  (CPU s: train {seconds:.1f}, judge {judging:.1f})  {verdict}",
                flush=True,
            )
    print(
        f"reference: thresholds held on {held} of {n} seeds; worst margins: "
        + ", ".join(f"{k} {m:+.3f}" for k, m in worst.items())
    )
    for name, count in own_failed.items():
        print(
            f"trained with {name}: fails its own check ({OWN_CHECK[name]}) on {count} of {n} seeds, "
            f"by {own_worst[name]:+.3f} at the least"
        )
    for (name, k), (lo, hi) in ranges.items():
        print(f"  range {name:>12} {k}: {lo:.3f} .. {hi:.3f}")
    print(
        f"reference CPU s: training {min(train_s):.1f} .. {max(train_s):.1f}, "
        f"judging (every evaluation above) {min(judge_s):.1f} .. {max(judge_s):.1f}"
    )
    print(f"peak MB of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
    return 0 if held == n and all(c == n for c in own_failed.values()) else 1
