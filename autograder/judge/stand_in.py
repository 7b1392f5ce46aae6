"""Each bug charged once: the judge stands in for a graded function that
another graded function of the same assignment calls.

When the suites call, say, the student's `dot_attention`, the worker's
`masked_softmax` is replaced (for that call only) by a proxy that sends its
tensors to the judge through the wire; the judge answers with the reference's
result, forward and backward. So `dot_attention` is graded as if the
`masked_softmax` it calls were right, and the reference never reaches the
worker as code. The judge answers only the functions it listed for the call
in progress, never the function being graded itself, and at most
MAX_CALLBACKS times per call. grading.yml `scoring.isolate_dependencies:
false` turns this off.
"""

import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from autograder.judge import detect
from autograder.judge.text import one_line
from autograder.messages import t
from autograder.protocol.grads import vjp

if TYPE_CHECKING:
    from autograder.config import Config

MAX_CALLBACKS = 256  # a loop over a batch calls its softmax a few times; a flood is the student's own loss


def graded_functions(assignment: str) -> dict[str, Callable[..., Any]]:
    """The assignment's graded functions (not classes; not provided ones) from its reference module."""
    try:
        module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    except ImportError:
        return {}
    provided = set(getattr(module, "PROVIDED", ()))
    return {
        n: f
        for n, f in vars(module).items()
        if inspect.isfunction(f) and f.__module__ == module.__name__ and not n.startswith("_") and n not in provided
    }


class StandIn:
    def __init__(self, assignment: str, cfg: "Config") -> None:
        on = cfg.scoring.get("isolate_dependencies", True)
        questions = cfg.questions(assignment)
        self.functions = {
            n: f for n, f in graded_functions(assignment).items() if on and detect.question_name(n) in questions
        }
        self.used: dict[str, set[str]] = {}  # graded target -> names the judge stood in for while it ran
        # the most a stand-in's answer may hold (what the judge reads from a worker at most):
        # broadcasting small inputs could otherwise make the judge build a huge result
        self.max_bytes = int(cfg.limits.get("reply_bytes") or 0)

    def allowed(self, target: str) -> list[str]:
        """What the judge stands in for while `target` runs: the others."""
        return sorted(n for n in self.functions if n != target)

    def answer(self, target: str, allowed: list[str], message: dict[str, Any], count: int) -> dict[str, Any]:
        """The reply to one callback from the worker (plain data, checked here)."""
        reply = self._answer(target, allowed, message, count)
        if not reply.get("ok"):
            name = message.get("name") if isinstance(message.get("name"), str) else "?"
            reply["error"] = t("stand_in_error", name=one_line(name, 60), why=reply["error"])
        return reply

    def _answer(self, target: str, allowed: list[str], message: dict[str, Any], count: int) -> dict[str, Any]:
        if count > MAX_CALLBACKS:
            return {"ok": False, "error": t("stand_in_flood", n=MAX_CALLBACKS)}
        name = message.get("name")
        args, kwargs = message.get("args"), message.get("kwargs")
        if (
            not isinstance(name, str)
            or name not in allowed
            or not isinstance(args, list)
            or not isinstance(kwargs, dict)
        ):
            return {"ok": False, "error": t("stand_in_refused")}
        self.used.setdefault(target, set()).add(name)
        fn = self.functions[name]
        grads_out = message.get("grad_outputs")
        try:
            size = _output_bytes(fn, args, kwargs)  # on the meta device: shapes, no memory
            if self.max_bytes and size > self.max_bytes:
                return {"ok": False, "error": t("stand_in_too_big", size=size, limit=self.max_bytes)}
            if grads_out is None:
                with torch.no_grad():
                    value = fn(*args, **kwargs)
                return {"ok": True, "value": _detached(value)}
            return {"ok": True, "grads": _backward(fn, args, kwargs, grads_out)}
        except Exception as exc:  # noqa: BLE001 - the inputs are the student's: any error is theirs to see
            return {"ok": False, "error": one_line(f"{type(exc).__name__}: {exc}", 300)}


def _output_bytes(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> int:
    """The bytes `fn`'s outputs would take, worked out on meta copies of the inputs.

    On the meta device torch works out shapes in Python (about 2 ms a call, where the call itself
    takes 30 us on the CPU), and a suite's callbacks repeat the same shapes: a size is kept per
    function and per call shape (`_shape_key`), at most _SIZES_KEPT of them."""
    key = _shape_key(args, kwargs)
    if key is not None and (fn, key) in _SIZES:
        return _SIZES[(fn, key)]

    def meta(v: Any) -> Any:
        return torch.empty(v.shape, dtype=v.dtype, device="meta") if isinstance(v, torch.Tensor) else v

    with torch.no_grad():
        out = fn(*[meta(a) for a in args], **{k: meta(v) for k, v in kwargs.items()})
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    size = sum(o.numel() * o.element_size() for o in outs if isinstance(o, torch.Tensor))
    if key is not None:
        if len(_SIZES) >= _SIZES_KEPT:
            _SIZES.clear()
        _SIZES[(fn, key)] = size  # only a call that returned: an error is worked out again
    return size


_SIZES: dict[tuple[Callable[..., Any], tuple[Any, ...]], int] = {}
_SIZES_KEPT = 4096


def _shape_key(args: list[Any], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """What a call's output size depends on: each top-level tensor's shape and dtype (its values
    never reach the meta copy) and every other value exactly (its type too: True is not 1); None
    where a value could hide a tensor or is not plain (not kept)."""

    def plain(v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return (type(v).__name__, v)
        if isinstance(v, (list, tuple)):
            items = [plain(x) for x in v]
            return None if any(i is None for i in items) else (type(v).__name__, tuple(items))
        return None  # a tensor inside a list reaches `fn` with its values; anything else: not kept

    def one(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), str(v.dtype))
        return plain(v)

    names = [None] * len(args) + sorted(kwargs)
    parts = [one(a) for a in args] + [one(kwargs[k]) for k in sorted(kwargs)]
    return None if any(p is None for p in parts) else tuple(zip(names, parts))


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return [_detached(v) for v in value]
    return value


def _backward(
    fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], grads_out: object
) -> list[torch.Tensor | None]:
    """Gradients of `fn` at the call's inputs, for the tensors among `args` and `kwargs` (in that order)."""
    leaves: list[torch.Tensor | None] = []

    def leaf(v: Any) -> Any:
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            v = v.detach().clone().requires_grad_(True)
            leaves.append(v)
            return v
        if isinstance(v, torch.Tensor):
            leaves.append(None)
        return v

    args = [leaf(a) for a in args]
    kwargs = {k: leaf(v) for k, v in kwargs.items()}
    out = fn(*args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not isinstance(grads_out, list) or len(grads_out) != len(outs):
        raise ValueError("gradients for a different number of outputs")
    pairs = [(o, g) for o, g in zip(outs, grads_out) if isinstance(g, torch.Tensor) and o.requires_grad]
    live = [v for v in leaves if v is not None]
    grads: Sequence[torch.Tensor | None] = (
        vjp([o for o, _ in pairs], live, [g.to(o.dtype) for o, g in pairs]) if pairs and live else [None] * len(live)
    )
    it = iter(grads)
    return [None if v is None else next(it) for v in leaves]
