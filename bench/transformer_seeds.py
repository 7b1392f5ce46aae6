"""The coming transformer lab's run in the grader, designed and measured on the reference
over seeds (issue 24; docs/pages/transformer-contract.md, "The training run in the grader").

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
reference is above chance there without the mask (0.16 .. 0.41): its mirror lookup, run at
a prompt position, lands on the answer's copy of the same symbol, a quirk of reversal;
with the answer replaced by other symbols ("reads_future_misled") it falls (0.12 .. 0.34).
Also shown: "follows", the answers that write the (wrong) next token of such a sequence.

The same run is then made twice more with the same parameters and batches, the model
trained without the positional encoding ("no positions") and without the causal mask
("no mask"), both evaluated by the same judge: each must fail its own check (positions,
reads_future) on every seed. Also shown, not checked: the accuracy with the encoding
zeroed, teacher-forced accuracy with and without the mask on the answer, and greedy
decoding without the mask (each step sees the prefix only).

    OMP_NUM_THREADS=1 python bench/transformer_seeds.py [--seeds 10] [--first 0] [--steps N] ...
"""

import argparse
import resource
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.private.solutions import transformer_block as ref  # noqa: E402


@dataclass(frozen=True)
class Settings:
    """The proposed run (not yet in grading.yml)."""

    seed: int = 0
    steps: int = 400  # Adam steps, one batch each
    batch_size: int = 32
    length: int = 8  # symbols to reverse: sequences of 2 * length + 1 tokens
    n_symbols: int = 8  # chance: 1 / n_symbols
    d_model: int = 32
    n_heads: int = 2
    d_ff: int = 64
    n_layers: int = 2
    lr: float = 0.003
    eval_sequences: int = 500
    # thresholds (proposed)
    min_accuracy: float = 0.9  # greedy token accuracy of the trained model, at least
    min_positions_drop: float = 0.5  # accuracy minus accuracy with the positional encoding zeroed, at least
    max_reads_future: float = 0.7  # without the causal mask, accuracy on the prompt's random symbols, at most
    max_loss_ratio: float = 0.1  # held-out loss, trained over initial, at most

    @property
    def sizes(self):
        return {
            "vocab_size": self.n_symbols + 2,
            "d_model": self.d_model,
            "n_heads": self.n_heads,
            "d_ff": self.d_ff,
            "n_layers": self.n_layers,
        }


@dataclass
class Task:
    settings: Settings
    state: dict  # {name: float32 tensor}: the reference's initialisation under the seed
    batches: list  # [tokens (batch_size, 2 * length + 1)] * steps


def task(s):
    """The judge's task for settings `s`: the same for every submission graded with them."""
    g = torch.Generator().manual_seed(s.seed)
    torch.manual_seed(s.seed)
    model = ref.TransformerLM(**s.sizes)
    state = {n: v.detach().clone() for n, v in model.state_dict().items()}
    batches = [ref.make_reverse_batch(s.batch_size, s.length, s.n_symbols, g) for _ in range(s.steps)]
    return Task(s, state, batches)


def load(t, state):
    """The reference model with `state` loaded (what the judge does with the worker's)."""
    model = ref.TransformerLM(**t.settings.sizes)
    model.load_state_dict(state)
    return model.eval()


def train_reference(t):
    """The worker's path: the provided driver with the reference's parts."""
    losses, state = ref.run_train_steps(t.settings.sizes, t.state, t.batches, t.settings.lr)
    return losses, state


def train_ablated(t, positions=True, causal=True):
    """The same run with a model whose forward pass leaves out the positions or the mask."""
    model = load(t, t.state).train()
    opt = torch.optim.Adam(model.parameters(), lr=t.settings.lr)
    losses = []
    for tokens in t.batches:
        logits = ref.ablated_logits(model, tokens, positions=positions, causal=causal)
        loss = ref.next_token_loss(logits, tokens)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


def eval_batch(t, salt=1000):
    """The judge's evaluation sequences (never sent to the worker)."""
    s = t.settings
    g = torch.Generator().manual_seed(s.seed * 7919 + salt)
    return ref.make_reverse_batch(s.eval_sequences, s.length, s.n_symbols, g)


@torch.no_grad()
def greedy(model, tokens, positions=True, causal=True):
    """Greedy decoding of the answer from the prompt alone: (N, L) tokens."""
    L = (tokens.shape[1] - 1) // 2
    seq = tokens[:, : L + 1]  # (N, L + 1): a_1 .. a_L, SEP
    for _ in range(L):
        logits = ref.ablated_logits(model, seq, positions=positions, causal=causal)  # (N, T', V)
        seq = torch.cat([seq, logits[:, -1].argmax(-1, keepdim=True)], dim=1)  # (N, T' + 1)
    return seq[:, L + 1 :]  # (N, L): the answer


@torch.no_grad()
def teacher_forced(model, tokens, positions=True, causal=True):
    """Argmax predictions of the answer's tokens from the true prefix: (N, L)."""
    L = (tokens.shape[1] - 1) // 2
    logits = ref.ablated_logits(model, tokens, positions=positions, causal=causal)  # (N, 2L + 1, V)
    return logits[:, L:-1].argmax(-1)  # (N, L): made at SEP .. the answer's second-to-last token


@torch.no_grad()
def held_out_loss(model, t):
    """The next-token loss over the answer alone (the prompt's symbols are random), on the judge's
    own sequences."""
    tokens = eval_batch(t, salt=999)
    answer = torch.arange(tokens.shape[1]) > t.settings.length  # (2L + 1,): after SEP
    return float(ref.next_token_loss(model(tokens), tokens, answer.expand_as(tokens)))


@torch.no_grad()
def prompt_accuracy(model, tokens, causal=True):
    """Teacher-forced accuracy on the prompt's symbols after the first: they are random, so a
    model that only reads the past is at chance there (1 / n_symbols); one that reads ahead
    copies them once the mask is removed."""
    L = (tokens.shape[1] - 1) // 2
    logits = ref.ablated_logits(model, tokens, causal=causal)  # (N, 2L + 1, V)
    return float((logits[:, : L - 1].argmax(-1) == tokens[:, 1:L]).double().mean())  # made at 0 .. L - 2


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


def judge(t, state, initial_loss):
    """Every figure of a trained state, and the margins to the thresholds."""
    s = t.settings
    model = load(t, state)
    tokens = eval_batch(t)
    L = s.length
    answer = tokens[:, L + 1 :]  # (N, L)
    masked_tf = teacher_forced(model, tokens)
    unmasked_tf = teacher_forced(model, tokens, causal=False)
    wrong = misleading_future(t, tokens)
    f = {
        "accuracy": float((greedy(model, tokens) == answer).double().mean()),
        "zeroed": float((greedy(model, tokens, positions=False) == answer).double().mean()),
        "reads_future": prompt_accuracy(model, tokens, causal=False),
        "reads_future_misled": prompt_accuracy(model, wrong, causal=False),
        "follows": float((teacher_forced(model, wrong, causal=False) == wrong[:, L + 1 :]).double().mean()),
        "prompt_masked": prompt_accuracy(model, tokens),
        "loss_ratio": held_out_loss(model, t) / initial_loss,
        "tf_masked": float((masked_tf == answer).double().mean()),
        "tf_unmasked": float((unmasked_tf == answer).double().mean()),
        "agreement": float((masked_tf == unmasked_tf).double().mean()),
        "greedy_unmasked": float((greedy(model, tokens, causal=False) == answer).double().mean()),
    }
    margins = {
        "accuracy": f["accuracy"] - s.min_accuracy,
        "positions": f["accuracy"] - f["zeroed"] - s.min_positions_drop,
        "reads_future": s.max_reads_future - f["reads_future"],
        "loss_ratio": s.max_loss_ratio - f["loss_ratio"],
    }
    return f, margins


OWN_CHECK = {"no positions": "positions", "no mask": "reads_future"}  # what each ablated training must fail


def one_seed(s):
    """{model: (figures, margins, training CPU s, judging CPU s)} for one seed."""
    t = task(s)
    initial = held_out_loss(load(t, t.state), t)
    out = {}
    for name, train in (
        ("reference", lambda: train_reference(t)),
        ("no positions", lambda: train_ablated(t, positions=False)),
        ("no mask", lambda: train_ablated(t, causal=False)),
    ):
        start = time.process_time()
        _, state = train()
        seconds = time.process_time() - start
        if name == "reference":  # the judge's forward with both switches on is the module's
            model, tokens = load(t, state), eval_batch(t)
            with torch.no_grad():
                assert torch.equal(model(tokens), ref.ablated_logits(model, tokens))
        start = time.process_time()
        figures, margins = judge(t, state, initial)
        out[name] = (figures, margins, seconds, time.process_time() - start)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    for f in fields(Settings):
        if f.name != "seed":
            p.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    args = p.parse_args()
    torch.set_num_threads(1)  # as in the worker
    base = Settings(**{f.name: getattr(args, f.name) for f in fields(Settings) if f.name != "seed"})
    print(
        f"reversal of {base.length} of {base.n_symbols} symbols (chance {1 / base.n_symbols:.3f}); "
        f"{base.steps} Adam steps x {base.batch_size}, lr {base.lr:g}; sizes {base.sizes}; "
        f"{base.eval_sequences} evaluation sequences; thresholds: accuracy >= {base.min_accuracy}, "
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
            failed = sorted(k for k, m in margins.items() if m <= 0)
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


if __name__ == "__main__":
    sys.exit(main())
