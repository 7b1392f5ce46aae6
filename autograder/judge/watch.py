"""A log of the calls a stood-in function answers: the judge sees what the student's code asks.

A suite that grades how the student's code works, not only what it returns (a decoding step
that must attend from the new token only, a projection that must compute only the new rows),
stands the judge in for the functions the student's code is supposed to call: a provided
function of the notebook's namespace (`attention`) or a method reached from it by a dotted
path (`nn.Linear.forward`). For that call, the worker replaces each one with a proxy that
sends its arguments to the judge (`worker.runner.Worker._watch`); the judge answers with the
function the suite gave and keeps, per name, the arguments it was sent: plain tensors and
values the judge received and computed on itself (`Seen`), never the worker's account of them.
A computation the student's code does around the stand-in (attention written inline) reaches
no log: the suite then fails "the step must call X".

What the log cannot tell alone is whether the answer was used: a student can call the stand-in
with the shapes the suite expects and compute the real thing inline. A suite closes that road
by answering with a keyed function (`suites/costs.py` `keyed`): the answer carries a secret
transform of the judge's, so an output that did not go through the answers is wrong in value.

The rule of `judge.stand_in` holds here too: the judge never answers for the part being graded.
`Watch.check` (run by `Remote` before the call) refuses, as the kit's own fault, a watched name
that is the target, a graded function or class whose reference can run the target's, or an
answering function that can run the target's reference (`stand_in.reaching`).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from autograder.faults import KitFault, Refused, contract
from autograder.judge.stand_in import MAX_CALLBACKS, _backward, _detached, _output_bytes
from autograder.messages import t

if TYPE_CHECKING:
    from autograder.judge.stand_in import StandIn

MAX_SEEN = 4096  # calls kept per Watch (a decoding run of a few layers and steps makes tens)


class WatchRefused(KitFault):
    """A suite asked the judge to stand in for the part being graded (or for what runs it):
    the suite's bug, raised before the call, never a quiet stand-in."""


@dataclass(frozen=True)
class Seen:
    """One call a stood-in function answered, as the judge received it."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    state: dict[str, Any] | None = None  # a method's module: its parameters and buffers by name
    answered: bool = True  # False where the answering function refused the arguments

    @property
    def shapes(self) -> tuple[tuple[int, ...] | None, ...]:
        """The shape of each positional argument (None for one that is no tensor)."""
        return tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else None for a in self.args)

    def shape(self, arg: int | str) -> tuple[int, ...] | None:
        """The shape of positional argument `arg` (an index) or keyword argument `arg`."""
        v = self.args[arg] if isinstance(arg, int) and arg < len(self.args) else self.kwargs.get(str(arg))
        return tuple(v.shape) if isinstance(v, torch.Tensor) else None


@dataclass
class Watch:
    """The functions the judge answers for during one call, by name, and the log of their calls.

    `answers`: {name: function}. A name without a dot is a function of the notebook's namespace,
    called `fn(*args, **kwargs)`; a dotted name ending in a class's method (`nn.Linear.forward`)
    is called `fn(state, *args, **kwargs)`, `state` the module's parameters and buffers by name.
    Pass it as `CallOptions(watch=...)`; read `calls(name)` after."""

    answers: Mapping[str, Callable[..., Any]]
    max_bytes: int = 0  # the most one answer may hold (the judge's reply_bytes where 0 is given)
    seen: list[Seen] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return sorted(self.answers)

    def calls(self, name: str) -> list[Seen]:
        """The calls of `name` the judge answered in this Watch's calls, in order ([] for none)."""
        return [s for s in self.seen if s.name == name]

    def clear(self) -> None:
        self.seen.clear()

    def check(self, target: str, stand_in: "StandIn | None") -> None:
        """Raise WatchRefused where answering these names could answer for `target`."""
        for name, fn in self.answers.items():
            head = name.split(".")[0]
            if head == target or name == target:
                raise WatchRefused(f"the judge cannot watch {name!r} while it grades {target!r}")
            if stand_in is None:
                continue
            if stand_in.reaches_target(target, head):
                raise WatchRefused(f"{name!r} can run {target!r}'s reference: the judge cannot answer for it")
            if stand_in.runs_target(target, fn):
                raise WatchRefused(f"the function answering {name!r} can run {target!r}'s reference")

    def answer(self, message: dict[str, Any], count: int) -> dict[str, Any]:
        """The reply to one callback of a watched name (plain data, checked here). The
        function's refusal of the arguments (`faults.contract`) is the student's error; any
        other error is the kit's and leaves here as it came."""
        if count > MAX_CALLBACKS:
            return {"ok": False, "error": t("stand_in_flood", n=MAX_CALLBACKS)}
        name, args, kwargs = message.get("name"), message.get("args"), message.get("kwargs")
        state = message.get("state")
        if (
            not isinstance(name, str)
            or name not in self.answers
            or not isinstance(args, list)
            or not isinstance(kwargs, dict)
            or not all(isinstance(k, str) for k in kwargs)
            or not (state is None or isinstance(state, dict))
        ):
            return {"ok": False, "error": t("stand_in_refused")}
        fn = self.answers[name]
        grads_out = message.get("grad_outputs")
        if isinstance(state, dict):
            if not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
                return {"ok": False, "error": t("stand_in_refused")}
            call_args: list[Any] = [state, *args]
        else:
            call_args = list(args)
        if grads_out is None and len(self.seen) < MAX_SEEN:
            self.seen.append(Seen(name, tuple(args), dict(kwargs), dict(state) if isinstance(state, dict) else None))
        try:
            size = _size(fn, call_args, kwargs, isinstance(state, dict))
            if self.max_bytes and size > self.max_bytes:
                return {"ok": False, "error": t("stand_in_too_big", size=size, limit=self.max_bytes)}
            if grads_out is not None:
                return {"ok": True, "grads": _backward(fn, call_args, kwargs, grads_out)}
            with torch.no_grad(), contract(call_args, kwargs):
                value = fn(*call_args, **kwargs)
            return {"ok": True, "value": _detached(value)}
        except Refused as exc:
            if grads_out is None and self.seen and self.seen[-1].name == name:
                last = self.seen.pop()
                self.seen.append(Seen(last.name, last.args, last.kwargs, last.state, answered=False))
            return {"ok": False, "error": t("stand_in_error", name=name, why=exc.line())}


def _size(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], method: bool) -> int:
    """The bytes the answer would take, worked out on the meta device (shapes, no memory); a
    method's `state` (its first argument) made meta too."""
    if not method:
        return _output_bytes(fn, args, kwargs)
    meta = {k: torch.empty(v.shape, dtype=v.dtype, device="meta") for k, v in args[0].items()}

    def bound(*a: Any, **k: Any) -> Any:
        return fn(meta, *a, **k)

    return _output_bytes(bound, args[1:], kwargs)
