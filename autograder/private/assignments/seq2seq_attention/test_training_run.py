"""Hidden tests: the training run in the grader (question `training_run`).

One call trains the student's model in the worker: the notebook's
`run_train_steps("attention", sizes, encoder_state, decoder_state, batches, lr,
optimizer="adam")` with the student's Encoder, AttentionDecoder, train_step and
masked_loss (no stand-in: these points are for a model that trains), under
grading.yml `training_run.cpu_seconds`. Everything else happens here, from plain
data (see `training`): the task, the parameters it starts from, the batches,
the evaluation of the trained parameters on the judge's own sequences, sent to the
worker only after the parameters came back (through the student's own Encoder and
AttentionDecoder with them loaded, one call per pass under
`training_run.eval_cpu_seconds`, and through the reference's forward pass, the
worse counted), the ablation with the encoder states zeroed (the reference's
forward) and the baseline. A model that keeps its accuracy without its encoder states
does not use its attention: every check of the run fails for it.
"""

import math

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.assignments.seq2seq_attention import training
from autograder.private.suites import calls, failing, memo

QUESTION = "training_run"
_RUNS = {}  # id(sub) -> (sub, Outcome): one run per submission, shared by the checks below


def run(sub, cfg):
    """The submission's Outcome (trained once; a failure is re-raised for each check)."""
    return memo.once_per_submission(_RUNS, sub, lambda: _train(sub, training.task(training.settings(cfg))))


def _train(sub, task):
    s = task.settings
    what = t("lab_run_call", steps=s.steps, B=s.batch_size, max_len=s.max_len)
    reply = sub.call(
        training.DRIVER, task.args, {"optimizer": "adam"}, CallOptions(isolate=[], cpu_seconds=s.cpu_seconds)
    )
    if not reply.ok:
        calls.call_failed(what, reply.error)
    value = reply.value
    if not (isinstance(value, (list, tuple)) and len(value) == 3 and isinstance(value[0], list)):
        failing.fail(t("lab_driver_reply", what=what))
    losses = value[0]
    if len(losses) != s.steps or not all(isinstance(x, float) and math.isfinite(x) for x in losses):
        failing.fail(failing.caused(t("lab_run_losses", what=what, steps=s.steps), Msg("cause_lab_return_float")))
    try:
        states = training.checked_states(task, value[1], value[2])
    except training.BadState as exc:
        failing.fail(failing.caused(f"{what} {t(exc.key, **exc.fields)}", Msg("cause_lab_parameter_names")))
    try:
        return training.outcome(task, losses, *states, sub=sub)
    except (
        training.BadState
    ) as exc:  # the student's modules, the trained parameters loaded, failed on the judge's sequences
        failing.fail(
            failing.caused(
                f"{t('lab_run_eval_call', n=s.eval_per_length)} {t(exc.key, **exc.fields)}", Msg("cause_run_own")
            )
        )


def _no_shortcut(o, s):
    """Every check of the run fails for a model whose accuracy does not come from its attention."""
    L = s.longest
    if o.zeroed[L] > s.max_zeroed:
        failing.fail(
            failing.caused(
                t(
                    "lab_run_zeroed",
                    length=L,
                    got=number(o.zeroed[L], ".2f"),
                    most=number(s.max_zeroed, ".2f"),
                    acc=number(o.accuracy[L], ".2f"),
                ),
                Msg("cause_lab_run_shortcut"),
            )
        )


def _fmt(acc):
    return ", ".join(f"{L}: {a:.2f}" for L, a in acc.items())


def test_loss_goes_down(sub, cfg):
    """The loss on the judge's own held-out batch of the trained parameters (the worse of the
    student's own modules and the reference's forward) is at most loss_ratio_at_most of the
    initial parameters'."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    if not o.loss_ratio <= s.max_loss_ratio:
        failing.fail(
            failing.caused(
                t(
                    "lab_run_loss_ratio",
                    first=number(o.loss_before, ".3f"),
                    last=number(o.loss_before * o.loss_ratio, ".3f"),
                    ratio=number(o.loss_ratio, ".2f"),
                    most=number(s.max_loss_ratio, ".2f"),
                    yours=f"{o.losses[0]:.3f} -> {o.losses[-1]:.3f}",
                ),
                o.own_cause("loss_ratio", higher_is_better=False) or Msg("cause_lab_run_parts"),
            )
        )
    _no_shortcut(o, s)


def test_accuracy_by_length(sub, cfg):
    """Greedy decoding with the trained parameters reaches the accuracy thresholds at each length."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    for L, least in s.min_accuracy:
        if not o.accuracy[L] >= least:
            failing.fail(
                failing.caused(
                    t(
                        "lab_run_accuracy",
                        length=L,
                        got=number(o.accuracy[L], ".2f"),
                        least=number(least, ".2f"),
                        all=_fmt(o.accuracy),
                    ),
                    o.own_cause("accuracy", L) or Msg("cause_lab_run_parts"),
                )
            )
    _no_shortcut(o, s)


def test_beats_the_baseline(sub, cfg):
    """At the longer lengths the attention model beats the baseline (no attention) by gap_over_baseline."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    for L, least in s.min_gap:
        if not o.gap(L) >= least:
            failing.fail(
                failing.caused(
                    t(
                        "lab_run_gap",
                        length=L,
                        got=number(o.accuracy[L], ".2f"),
                        base=number(o.baseline[L], ".2f"),
                        least=number(least, ".2f"),
                    ),
                    o.own_cause("accuracy", L) or Msg("cause_lab_run_parts"),
                )
            )
    _no_shortcut(o, s)


def test_uses_its_attention(sub, cfg):
    """With the encoder states zeroed the trained model falls to near chance (and it had learned)."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    _no_shortcut(o, s)
    short, least = s.min_accuracy[0]  # a model that learned nothing loses nothing when zeroed
    if not o.accuracy[short] >= least:
        failing.fail(
            failing.caused(
                t(
                    "lab_run_accuracy",
                    length=short,
                    got=number(o.accuracy[short], ".2f"),
                    least=number(least, ".2f"),
                    all=_fmt(o.accuracy),
                ),
                o.own_cause("accuracy", short) or Msg("cause_lab_run_parts"),
            )
        )
