"""Hidden tests: the transformer lab's training run in the grader (question `training_run`).

One call trains the student's model in the worker: the notebook's
`run_train_steps(sizes, state, batches, lr)` with the student's TransformerLM (and the
positional_encoding, DecoderBlock and FeedForward it uses) and next_token_loss (no
stand-in: these points are for a model that trains), under grading.yml
`transformer_run.cpu_seconds`. Everything else happens here, from plain data (see
`training`): the task, the parameters it starts from, the batches, and the evaluation
of the trained parameters on the judge's own sequences, sent to the worker only after
the parameters came back: accuracy and loss through the student's own TransformerLM with
those parameters loaded (one call per decoding step, each under
`transformer_run.eval_cpu_seconds`) and through the reference's forward pass, the worse
counted; with the positional encoding zeroed and with the causal mask removed through the
reference's forward alone.

A model whose accuracy does not fall when its positional encoding is zeroed does not
use its positions (or learned nothing): every check of the run fails for it, as the
training lab's run fails a model that does not use its attention. A model that reads
the next position once its mask is removed fails the reads-ahead check, on its own
(it may have learned the reversal too: the other checks are not its).
"""

import math

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.assignments.transformer_block import training
from autograder.private.suites import calls, failing, memo

QUESTION = "training_run"
_RUNS = {}  # id(sub) -> (sub, Outcome): one run per submission, shared by the checks below


def run(sub, cfg):
    """The submission's Outcome (trained once; a failure is re-raised for each check)."""
    return memo.once_per_submission(_RUNS, sub, lambda: _train(sub, training.task(training.settings(cfg))))


def _train(sub, task):
    s = task.settings
    what = t("tb_run_call", steps=s.steps, B=s.batch_size, length=s.length)
    reply = sub.call(training.DRIVER, task.args, {}, CallOptions(isolate=[], cpu_seconds=s.cpu_seconds))
    if not reply.ok:
        # the judge's parameters do not load into the student's model: names or shapes not the contract's
        loading = "loading state_dict" in reply.error
        calls.call_failed(what, reply.error, Msg("cause_tb_parameter_names") if loading else None)
    value = reply.value
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[0], list)):
        failing.fail(t("tb_driver_reply", what=what))
    losses = value[0]
    if len(losses) != s.steps or not all(isinstance(x, float) and math.isfinite(x) for x in losses):
        failing.fail(failing.caused(t("lab_run_losses", what=what, steps=s.steps), Msg("cause_tb_run_losses")))
    try:
        state = training.checked_state(task, value[1])
    except training.BadState as exc:
        failing.fail(failing.caused(f"{what} {t(exc.key, **exc.fields)}", Msg("cause_tb_parameter_names")))
    try:
        return training.outcome(task, losses, state, sub)
    except (
        training.BadState
    ) as exc:  # the student's model, the trained parameters loaded, failed on the judge's sequences
        failing.fail(
            failing.caused(
                f"{t('tb_run_eval_call', n=s.eval_sequences)} {t(exc.key, **exc.fields)}", Msg("cause_run_own")
            )
        )


def _uses_positions(o, s):
    """Every check of the run fails for a model whose answers do not come from its positions. The
    cause: the positions when the model learned without them, or when zeroing them helps (it was
    trained with other positions, or none); else the parts (it learned nothing)."""
    ok = training.passed(s, o)
    if not ok["positions"]:
        positions = ok["accuracy"] or o.drop < 0
        own = o.own_cause("accuracy")
        failing.fail(
            failing.caused(
                t(
                    "tb_run_positions",
                    got=number(o.zeroed, ".2f"),
                    acc=number(o.accuracy, ".2f"),
                    drop=number(o.drop, ".2f"),
                    least=number(s.min_positions_drop, ".2f"),
                ),
                own or Msg("cause_tb_run_positions" if positions else "cause_tb_run_parts"),
            )
        )


def _learned(o, s):
    if not training.passed(s, o)["accuracy"]:
        failing.fail(
            failing.caused(
                t(
                    "tb_run_accuracy",
                    n=s.eval_sequences,
                    got=number(o.accuracy, ".2f"),
                    least=number(s.min_accuracy, ".2f"),
                ),
                o.own_cause("accuracy") or Msg("cause_tb_run_parts"),
            )
        )


def test_loss_goes_down(sub, cfg):
    """The loss over the answer on the judge's own sequences of the trained parameters (the worse of the
    student's own forward and the reference's) is at most loss_ratio_at_most of the initial parameters'."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    if not training.passed(s, o)["loss_ratio"]:
        failing.fail(
            failing.caused(
                t(
                    "lab_run_loss_ratio",
                    first=number(o.loss_before, ".3f"),
                    last=number(o.loss_before * o.loss_ratio, ".3f"),
                    ratio=number(o.loss_ratio, ".3f"),
                    most=number(s.max_loss_ratio, ".2f"),
                    yours=f"{o.losses[0]:.3f} -> {o.losses[-1]:.3f}",
                ),
                o.own_cause("loss_ratio", higher_is_better=False) or Msg("cause_tb_run_parts"),
            )
        )
    _uses_positions(o, s)


def test_accuracy(sub, cfg):
    """Greedy decoding of the answer from the prompt alone, with the trained parameters, reaches accuracy
    (the worse of the student's own forward and the reference's)."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    _learned(o, s)
    _uses_positions(o, s)


def test_uses_positions(sub, cfg):
    """With the positional encoding zeroed the trained model's accuracy falls by positions_drop at least."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    _uses_positions(o, s)


def test_never_reads_ahead(sub, cfg):
    """With the causal mask removed the trained model is still no better than reads_future_at_most on
    the prompt's random symbols (it never learned to read the next position). A model that learned
    nothing reads nothing ahead either, but it earns no point here: its positions' drop (accuracy
    minus accuracy with them zeroed, at least positions_drop) is near 0, and that fails every check
    of the run. A model that learned less than the accuracy threshold keeps this point: its
    accuracy costs it the accuracy check, not this one."""
    s = training.settings(cfg)
    o = run(sub, cfg)
    if not training.passed(s, o)["reads_future"]:
        failing.fail(
            failing.caused(
                t(
                    "tb_run_reads_ahead",
                    got=number(o.reads_future, ".2f"),
                    chance=number(s.chance, ".3f"),
                    most=number(s.max_reads_future, ".2f"),
                ),
                Msg("cause_tb_run_reads_ahead"),
            )
        )
    _uses_positions(o, s)
