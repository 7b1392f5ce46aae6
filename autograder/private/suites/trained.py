"""What the two labs' training runs (the training lab's and the transformer lab's `training_run`)
share in the judge: the trained parameters a worker sends back, checked before they are loaded
anywhere (exactly the contract's names and shapes, floating point, with values and finite), and
the student's own model run on them.

Whose forward scores a run: the judge measures the trained state twice, through the student's
own classes (`Own`: built in the worker as the run builds them, the returned state loaded into
them, called on the judge's evaluation sequences, which the worker sees only after it has sent
the state back) and through the contract's (the reference's modules, here), and counts the worse
of the two (`worse`). The student's forward ties the score to the student's model: weights trained
elsewhere, run by a forward that is not the one that trained them, score what that forward makes
of them. The reference's forward ties it to the state: a forward that solves the task by itself,
with a state that learned nothing, scores what the state does. The ablations (positions or
encoder states zeroed, causal mask removed) take the state apart, so they run on the
reference's forward only (docs/pages/training-lab.md, "Whose forward scores the run")."""

from dataclasses import dataclass

import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number


class BadState(Exception):
    """The trained parameters are not the contract's: `key` (messages) and its fields."""

    def __init__(self, key, **fields):
        super().__init__(key)
        self.key, self.fields = key, fields


def checked(want, got, prefix=""):
    """The worker's `got` ({name: tensor}, a dict) checked against the reference's state dict
    `want`: {name: float32 tensor} to load, in `want`'s order. Raises BadState naming the first
    missing, non-floating, misshapen, valueless (meta), non-finite or extra tensor
    (`prefix.name` with a prefix)."""

    def label(name):
        return f"{prefix}.{name}" if prefix else name

    for name, w in want.items():
        g = got.get(name)
        if not isinstance(g, torch.Tensor) or not g.is_floating_point():
            raise BadState("lab_run_state_missing", name=label(name))
        if tuple(g.shape) != tuple(w.shape):
            raise BadState("lab_run_state_shape", name=label(name), got=tuple(g.shape), expected=tuple(w.shape))
        if g.device.type == "meta":  # the wire carries a meta tensor's shape alone: no values to check
            raise BadState("lab_run_state_no_values", name=label(name))
        if not bool(torch.isfinite(g).all()):
            raise BadState("lab_run_state_not_finite", name=label(name))
    extra = sorted(set(got) - set(want), key=str)
    if extra:
        raise BadState("lab_run_state_extra", name=label(extra[0]))
    return {n: got[n].detach().to(torch.float32) for n in want}


@dataclass(frozen=True)
class Own:
    """The student's class `target` in the worker, built with `args` and `kwargs` as the run
    builds it and the checked trained `state` loaded into it (CallOptions construct and state),
    called like a module: each call is one worker call with no stand-in, under `cpu_seconds`
    (grading.yml's `eval_cpu_seconds`). Raises BadState when the call fails."""

    sub: object
    target: str
    args: tuple
    kwargs: dict
    state: dict
    cpu_seconds: float

    def __call__(self, *inputs):
        options = CallOptions(
            construct={"args": list(self.args), "kwargs": dict(self.kwargs)},
            state=self.state,
            isolate=[],
            cpu_seconds=self.cpu_seconds,
        )
        reply = self.sub.call(self.target, list(inputs), {}, options)
        if not reply.ok:
            raise BadState("run_own_failed", target=self.target, error=reply.error)
        return reply.value


def scores(value, shape, target):
    """The logits the student's `target` returned on the judge's sequences, as float32: a
    floating-point tensor of `shape`, with values, finite (BadState otherwise)."""
    shape = tuple(shape)
    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or tuple(value.shape) != shape:
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise BadState("run_own_logits", target=target, got=got, expected=shape)
    if value.device.type == "meta" or not bool(torch.isfinite(value).all()):
        raise BadState("run_own_logits_not_finite", target=target)
    return value.detach().to(torch.float32)


def worse(own, contract, higher_is_better=True):
    """What a run counts of one measure taken through the student's forward (`own`) and the
    contract's (`contract`): the worse of the two (numbers, or {key: number} alike)."""
    pick = min if higher_is_better else max
    if isinstance(own, dict):
        return {k: pick(own[k], contract[k]) for k in contract}
    return pick(own, contract)


def counted(own, contract):
    """A run's {"accuracy", "loss_ratio"} as it counts them: the contract's forward's alone when
    the student's model was not run (`own` None: the bench, the kit's tests), else the worse of
    the two measure by measure (accuracy higher, loss ratio lower is better)."""
    if own is None:
        return contract
    return {
        "accuracy": worse(own["accuracy"], contract["accuracy"]),
        "loss_ratio": worse(own["loss_ratio"], contract["loss_ratio"], higher_is_better=False),
    }


def own_cause(model, own, contract, higher_is_better=True):
    """The likely cause of a failed run check when the student's own forward made less of the
    trained state than the contract's forward (None otherwise), with both numbers."""
    if own == contract or (own > contract) == higher_is_better:
        return None
    return Msg("cause_run_own_forward", model=model, own=number(own, ".2f"), contract=number(contract, ".2f"))
