"""Hidden tests: train_step(encoder, decoder, optimizer, src, src_lengths, tgt,
tgt_lengths) -> float, one teacher-forced optimisation step.

Modules cannot cross the wire, so the judge calls the provided driver
`run_train_steps("baseline", sizes, encoder_state, decoder_state, batches, lr)`
in the worker: it builds the provided baseline (so that a mistake in the
student's Encoder or AttentionDecoder costs nothing here), loads the judge's
parameters, runs the student's train_step on each batch with SGD and returns
the losses and the trained parameters. The judge stands in for masked_loss
during that call (each bug charged once). The yardstick: the same run of the
reference, here, in float64.
"""

import contextlib
from dataclasses import dataclass

import pytest
import torch

from autograder.judge import counterexample, shrink
from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.assignments.seq2seq_attention import common
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.suites import calls, failing, tensors, value_checks

QUESTION = "train_step"
DRIVER = "run_train_steps"
SIZES = {"vocab_size": 11, "emb_dim": 4, "hidden_dim": 6, "attn_dim": 5}
N_SYMBOLS = SIZES["vocab_size"] - 3


class Run:
    def __init__(self, seed, n_batches, lr=0.5, batch_size=3, max_len=5):
        V, E, H = SIZES["vocab_size"], SIZES["emb_dim"], SIZES["hidden_dim"]
        self.enc_state = common.random_state(ref.BaselineEncoder(V, E, H), seed, scale=0.5)
        self.dec_state = common.random_state(ref.BaselineDecoder(V, E, H), seed + 50, scale=0.5)
        g = tensors.gen(seed + 99)
        self.batches = [list(ref.make_copy_batch(batch_size, 1, max_len, N_SYMBOLS, g)) for _ in range(n_batches)]
        self.lr = lr
        self.args = ["baseline", SIZES, self.enc_state, self.dec_state, self.batches, lr]
        self.what = t("lab_train_call", n=n_batches, B=batch_size, lr=lr)

    def expected(self, step=None):
        return _run(self, step or ref.train_step)


def _run(run, step, batches=None):
    """run_train_steps of the reference with `step` as the training step (the judge's own copy),
    on the run's batches (or its first `batches`)."""
    V, E, H = SIZES["vocab_size"], SIZES["emb_dim"], SIZES["hidden_dim"]
    enc, dec = ref.BaselineEncoder(V, E, H).double(), ref.BaselineDecoder(V, E, H).double()
    enc.load_state_dict(run.enc_state)
    dec.load_state_dict(run.dec_state)
    opt = torch.optim.SGD(list(enc.parameters()) + list(dec.parameters()), lr=run.lr)
    losses = [float(step(enc, dec, opt, *b)) for b in run.batches[:batches]]
    return losses, enc.state_dict(), dec.state_dict()


def _variant(no_zero_grad=False, no_shift=False, zero_start=False, mask_all=False, shift_next=False, forced=None):
    """train_step with one mistake. `forced`: a teacher-forcing ratio's draws, one per step
    (False: the step is fed the decoder's argmax at the step before, as with
    `random.random() < teacher_forcing_ratio`)."""

    def step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
        if not no_zero_grad:
            optimizer.zero_grad()
        states, state = encoder(src, src_lengths)
        if zero_start:
            state = torch.zeros_like(state)
        mask = ref.length_mask(src_lengths, src.shape[1])
        inputs, targets = (tgt[:, :-1], tgt[:, :-1]) if no_shift else (tgt[:, :-1], tgt[:, 1:])
        if shift_next:
            inputs, targets = tgt[:, 1:], tgt[:, 1:]
        logits = []
        for i in range(inputs.shape[1]):
            fed = inputs[:, i] if forced is None or i == 0 or forced[i] else logits[-1].argmax(-1)
            out, state, _ = decoder(fed, state, states, mask)
            logits.append(out)
        logits = torch.stack(logits, 1)
        real = (
            torch.ones_like(targets, dtype=torch.bool)
            if mask_all
            else ref.length_mask(tgt_lengths - 1, targets.shape[1])
        )
        loss = ref.masked_loss(logits, targets, real)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def _same(losses, want):
    return len(want) == len(losses) and all(abs(a - b) < 1e-6 * max(1.0, abs(b)) for a, b in zip(losses, want))


def _cause(run, losses, keys=None):
    """The likely mistake whose losses the student's run reproduces (or None): a cause is
    given only when its alternative, run here, explains them (`keys`: only these)."""
    for key, kw in (
        ("cause_lab_no_zero_grad", {"no_zero_grad": True}),
        ("cause_lab_no_shift", {"no_shift": True}),
        ("cause_lab_no_shift_next", {"shift_next": True}),
        ("cause_lab_zero_start", {"zero_start": True}),
        ("cause_lab_mask_all", {"mask_all": True}),
    ):
        if keys is None or key in keys:
            want, _, _ = run.expected(_variant(**kw))
            if _same(losses, want):
                return Msg(key)
    if (keys is None or "cause_lab_teacher_forcing_ratio" in keys) and _teacher_forcing_ratio(run, losses[:1]):
        return Msg("cause_lab_teacher_forcing_ratio")
    return None


def _teacher_forcing_ratio(run, first):
    """Whether the first step's loss is the one of some draws of a teacher-forcing ratio
    (each decoder step after the first fed the true token or the decoder's own argmax; not
    every step the true one): all 2^(steps - 1) draws are run here (the batches are short)."""
    steps = run.batches[0][2].shape[1] - 1
    if not first or steps < 2 or steps > 8:
        return False
    for draws in range(2 ** (steps - 1) - 1):  # the last: every step teacher-forced (the reference)
        forced = [True] + [bool(draws >> i & 1) for i in range(steps - 1)]
        want, _, _ = _run(run, _variant(forced=forced), batches=1)
        if _same(first, want):
            return True
    return False


def trained(sub, run):
    """(losses, encoder_state, decoder_state) from the worker, checked to be plain data of the contract's kinds."""
    reply = sub.call(DRIVER, run.args, {"optimizer": "sgd"}, CallOptions(isolate=["masked_loss"]))
    if not reply.ok:
        calls.call_failed(run.what, reply.error)
    value = reply.value
    if not (
        isinstance(value, (list, tuple))
        and len(value) == 3
        and isinstance(value[0], list)
        and isinstance(value[1], dict)
        and isinstance(value[2], dict)
    ):
        failing.fail(t("lab_driver_reply", what=run.what))
    losses = value[0]
    if len(losses) != len(run.batches) or not all(isinstance(x, float) for x in losses):
        failing.fail(failing.caused(t("lab_losses_not_floats", what=run.what), Msg("cause_lab_return_float")))
    return losses, value[1], value[2]


def check_losses(run, losses, cfg):
    want, _, _ = run.expected()
    for i, (got, exp) in enumerate(zip(losses, want)):
        if abs(got - exp) > 1e-7 + 1e-6 * abs(exp):
            failing.fail(
                failing.caused(
                    t("lab_loss_differs", what=run.what, i=i + 1, got=number(got, ".6g"), expected=number(exp, ".6g")),
                    _cause(run, losses),
                )
            )


def check_params(run, states, cfg, losses):
    _, enc_want, dec_want = run.expected()
    for prefix, got, want in (("encoder", states[0], enc_want), ("decoder", states[1], dec_want)):
        for name, w in want.items():
            g = got.get(name)
            if not isinstance(g, torch.Tensor):
                failing.fail(t("lab_state_missing", what=run.what, name=f"{prefix}.{name}"))
            value_checks.assert_close(
                g,
                w,
                t("lab_param_after_steps", what=run.what, name=f"{prefix}.{name}"),
                cfg,
                torch.float64,
                hint=lambda _g, _e: _cause(run, losses) or Msg("cause_lab_update"),
            )


# The smallest runs tried first for a counterexample, fewest numbers first: (batch_size, max_len).
SMALL = ((1, 1), (1, 2), (2, 2), (1, 3), (2, 3))


@contextlib.contextmanager
def smaller_run_on_failure(sub, cfg, run):
    """Inside: a failed check of `run` (a loss or an updated parameter) carries the smallest
    run found, made fresh, on which the student's losses differ from the reference's: the
    fewest steps (up to one more than `run`'s, so that a wrong update shows in the next
    loss), then the fewest sequences and symbols (`SMALL`), within the question's
    counterexample budget (`shrink.ledger`; the engine's `TrainingStrategy`). Its batches
    are shown, and both losses; the baseline's parameters are drawn by the judge, too many
    to show."""
    try:
        yield
    except pytest.fail.Exception as exc:
        if not hasattr(exc, "counterexample"):  # a second look: run after the last verdict call
            exc.counterexample = lambda: _smaller_run(sub, cfg, run)
        raise


@dataclass
class Smaller:
    """A smaller run on which the student's losses differ from the reference's."""

    run: Run
    losses: list[float]
    want: list[float]
    calls: int = 0
    seconds: float = 0.0

    def largest(self):
        return max(int(x.numel()) for b in self.run.batches for x in b if isinstance(x, torch.Tensor))


@dataclass
class TrainingStrategy(shrink.Plain):
    """The engine's strategy for a training step: a candidate is a fresh run (its steps,
    sequences and symbols); its values are the copy task's, nothing to simplify."""

    probe: object
    lr: float
    steps: int  # the failing run's steps plus one
    seed: int

    def sizes(self):
        return {"steps": self.steps, "batch_size": SMALL[-1][0], "max_len": SMALL[-1][1]}

    def starts(self):
        return [
            ({"steps": n, "batch_size": b, "max_len": m}, None, 0) for n in range(1, self.steps + 1) for b, m in SMALL
        ]

    def simplest(self, values):
        return []

    def make(self, sizes, values, salt):
        n, b, m = sizes["steps"], sizes["batch_size"], sizes["max_len"]
        k = SMALL.index((b, m)) if (b, m) in SMALL else len(SMALL) + 3 * b + m
        small = Run(self.seed + 10 * n + k, n, lr=self.lr, batch_size=b, max_len=m)
        return small, small.expected()[0]

    def run(self, candidate, seconds):
        small, want = candidate
        reply = self.probe(DRIVER, small.args, {"optimizer": "sgd"}, CallOptions(isolate=["masked_loss"]), seconds)
        value = reply.value if reply.ok else None
        losses = value[0] if isinstance(value, (list, tuple)) and len(value) == 3 else None
        if isinstance(losses, list) and all(isinstance(x, float) for x in losses) and not _same(losses, want):
            return Smaller(small, losses, want)
        return None


def _smaller_run(sub, cfg, run):
    probe = getattr(sub, "probe", None)
    limits = shrink.budget(cfg)
    spent = shrink.ledger(sub, QUESTION)
    if probe is None or spent.spent(limits):
        return None
    # fresh: the hidden runs' seeds are 100 .. 399
    strategy = TrainingStrategy(probe, run.lr, len(run.batches) + 1, 7000 + 100 * limits.seed)
    found = shrink.search(QUESTION, strategy, limits, spent)
    return None if found is None else _render_run(found.run, found.losses, found.want, limits)


def _render_run(small, losses, want, limits):
    """A smaller run as the student reads it (`counterexample.Shown`): its batches, the student's
    losses, the expected ones."""
    show = counterexample.show
    batches = "; ".join(
        t(
            "counterexample_train_batch",
            i=i + 1,
            batch=", ".join(
                f"{name}={show(v, limits.numbers)}" for name, v in zip(("src", "src_lengths", "tgt", "tgt_lengths"), b)
            ),
        )
        for i, b in enumerate(small.batches)
    )
    decimals = next(
        (d for d in range(limits.decimals, 13) if [round(x, d) for x in losses] != [round(x, d) for x in want]),
        limits.decimals,
    )
    lines = (
        t("counterexample_train_input", call=small.what, batches=batches),
        t("counterexample_yours", outputs=f"losses={[round(x, decimals) for x in losses]}"),
        t("counterexample_expected", outputs=f"losses={[round(x, decimals) for x in want]}"),
    )
    largest = max(counterexample.numbers_in(x) for b in small.batches for x in b)
    return counterexample.Shown(lines, "train", max(largest, len(losses)))


def test_one_step(sub, cfg):
    """One step from the judge's parameters: the loss before the update and every updated parameter."""
    run = Run(100, 1)
    losses, enc, dec = trained(sub, run)
    with smaller_run_on_failure(sub, cfg, run):
        check_losses(run, losses, cfg)
        check_params(run, (enc, dec), cfg, losses)


def test_three_steps(sub, cfg):
    """Three steps in a row (gradients zeroed between them, one update each)."""
    run = Run(200, 3, lr=0.3)
    losses, enc, dec = trained(sub, run)
    with smaller_run_on_failure(sub, cfg, run):
        check_losses(run, losses, cfg)
        check_params(run, (enc, dec), cfg, losses)


@pytest.mark.property
def test_padding_changes_nothing(sub, cfg):
    """Other tokens after each target's EOS (padded positions) change neither the loss nor the update.
    A property: a step that does nothing (returns 0.0, never steps the optimiser) holds it too, so it
    earns at most the share the value checks above earn (judge.scoring)."""
    run = Run(300, 1)
    losses, enc, dec = trained(sub, run)
    noisy = Run(300, 1)
    src, src_lengths, tgt, tgt_lengths = noisy.batches[0]
    pad = ~tensors.lengths_mask(tgt_lengths, tgt.shape[1])
    tgt[pad] = torch.randint(3, SIZES["vocab_size"], (int(pad.sum()),), generator=tensors.gen(301))
    spad = ~tensors.lengths_mask(src_lengths, src.shape[1])
    src[spad] = torch.randint(3, SIZES["vocab_size"], (int(spad.sum()),), generator=tensors.gen(302))
    losses2, enc2, dec2 = trained(sub, noisy)

    def cause():
        """The padding cause only when counting the padded positions gives both losses;
        else whichever alternative explains them (a teacher-forcing ratio: a loss that
        changes for another reason than padding), else none."""
        mask_all = ["cause_lab_mask_all"]
        if _cause(run, losses, mask_all) and _cause(noisy, losses2, mask_all):
            return Msg("cause_lab_mask_all")
        return _cause(run, losses) or _cause(noisy, losses2)

    if abs(losses2[0] - losses[0]) > 1e-9 + 1e-7 * abs(losses[0]):
        failing.fail(
            failing.caused(
                t("lab_train_padding_counts", what=run.what, a=number(losses[0], ".6g"), b=number(losses2[0], ".6g")),
                cause(),
            )
        )
    for prefix, clean, padded in (("encoder", enc, enc2), ("decoder", dec, dec2)):
        for name, p in clean.items():
            q = padded.get(name)
            if not (isinstance(p, torch.Tensor) and isinstance(q, torch.Tensor)):
                failing.fail(t("lab_state_missing", what=run.what, name=f"{prefix}.{name}"))
            if tuple(p.shape) != tuple(q.shape) or not torch.allclose(p.double(), q.double(), rtol=1e-7, atol=1e-9):
                failing.fail(
                    failing.caused(t("lab_train_padding_update", what=run.what, name=f"{prefix}.{name}"), cause())
                )
