"""What a suite uses to grade cost: a call under a memory cap, and the calls the judge saw.

One obvious way for each:

    # memory: the call holds at most 256 MB beyond a bare worker (the kernel enforces it); it
    # must return the reference's values too (one that catches its MemoryError earns nothing)
    costs.within_memory(sub, cfg, "blocked_attention", [q, k, v], memory_mb=256,
                        reference_mb=40, expected=want, what="blocked_attention(q, k, v)")

    # work: the judge answers `attention` (keyed: an output that skipped its answers is wrong)
    attention = costs.keyed(provided_attention, seed=7)
    reply, seen = costs.watched_call(sub, "decode_step", args, answers={"attention": attention})
    costs.must_call(seen, "attention", what="decode_step")
    costs.check_sizes(seen, "attention", arg=0, dim=-2, expected=[1] * n_layers, what="decode_step",
                      cause=Msg("cause_recomputes_past"))
    with costs.replaying(vars(reference_module), {"attention": attention}):
        want = reference_module.decode_step(*args)   # the expected output, with the same answers

The cap and the log are the judge's (`judge/remote.py` CallOptions `memory_mb`, `watch`;
`sandbox/memcap.py`, `judge/watch.py`): nothing here takes the worker's word.
"""

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch

from autograder.judge.watch import Seen, Watch
from autograder.messages import t
from autograder.private.suites.checks import assert_close, call, caused, fail, judge_cfg, outputs


def within_memory(
    sub, cfg, name, args, expected, memory_mb, reference_mb=None, kwargs=None, what=None, out_names=("output",), **opts
):
    """Call the student's `name` with at most `memory_mb` MB of data beyond a bare worker; fail
    (the student's) where it runs out or raises, then where its outputs are not `expected` (a
    tensor, or a tuple of them, in `out_names` order) within the tolerances. Returns the reply."""
    what = what or name
    reply = call(sub, name, args, kwargs, memory_mb=memory_mb, reference_mb=reference_mb, **opts)
    want = expected if isinstance(expected, (tuple, list)) else (expected,)
    got = outputs(reply.value, what, list(out_names))
    for (n, g), w in zip(got.items(), want):
        assert_close(g, w, f"{what} -> {n}" if len(out_names) > 1 else what, cfg)
    return reply


def watched_call(sub, name, args, answers, kwargs=None, **opts):
    """Call the student's `name` with the judge standing in for each of `answers` ({name:
    function}, `judge.watch.Watch`); fail with the call's error unless it returned. Returns
    (reply, the Watch: its `calls(name)` are what the judge answered)."""
    watch = Watch(dict(answers), max_bytes=int(judge_cfg().limits.get("reply_bytes") or 0))
    reply = call(sub, name, args, kwargs, watch=watch, **opts)
    return reply, watch


def must_call(watch: Watch, name: str, what: str, cause=None) -> list[Seen]:
    """The calls of `name` the judge answered; fail "`what` must call `name`" where there were none."""
    seen = watch.calls(name)
    if not seen:
        fail(caused(t("must_call", what=what, name=name), cause))
    return seen


def sizes(watch: Watch, name: str, arg: int | str, dim: int) -> list[int | None]:
    """The size along `dim` of argument `arg` (an index or a keyword) in each call of `name`
    the judge answered (None where that argument was no tensor or has no such dimension)."""
    out: list[int | None] = []
    for s in watch.calls(name):
        shape = s.shape(arg)
        out.append(shape[dim] if shape is not None and -len(shape) <= dim < len(shape) else None)
    return out


def check_sizes(watch: Watch, name: str, arg: int | str, dim: int, expected: Sequence[int], what: str, cause=None):
    """Fail where the calls of `name` were not those `expected`: one per entry, argument `arg`
    of that size along `dim` (a decoding step's query length 1 in each attention call)."""
    got = sizes(watch, name, arg, dim)
    must_call(watch, name, what, cause)
    if got != list(expected):
        fail(caused(t("call_sizes_differ", what=what, name=name, got=_listed(got), expected=_listed(expected)), cause))


def _listed(values: Sequence[Any], most: int = 12) -> str:
    shown = ", ".join(str(v) for v in list(values)[:most])
    return f"[{shown}{', ...' if len(values) > most else ''}] ({len(values)})"


class keyed:
    """`fn` whose answers carry a secret of the judge's: each output tensor's last dimension
    turned by a random orthogonal matrix drawn from `seed` (one per size and dtype, the same on
    every call). A student's code that uses the judge's answers gives the output the reference
    gives with the same answers (`replaying`); one that computes the thing itself beside them
    (calling the stand-in with the expected shapes, for show) gives another. Methods answered
    with `state` (`judge.watch`) pass it through: `keyed(fn)(state, x)` is `fn(state, x)` turned."""

    def __init__(self, fn: Callable[..., Any], seed: int) -> None:
        self.fn, self.seed = fn, int(seed)
        self._turns: dict[tuple[int, torch.dtype], torch.Tensor] = {}

    def turn(self, size: int, dtype: torch.dtype) -> torch.Tensor:
        if (size, dtype) not in self._turns:
            g = torch.Generator().manual_seed(self.seed * 100_003 + size)
            q, r = torch.linalg.qr(torch.randn(size, size, dtype=torch.float64, generator=g))
            self._turns[(size, dtype)] = (q * torch.sign(torch.diagonal(r))).to(dtype)
        return self._turns[(size, dtype)]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = self.fn(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(self._turned(o) for o in out)
        return self._turned(out)

    def _turned(self, x: Any) -> Any:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() == 0 or x.device.type == "meta":
            return x
        return x @ self.turn(x.shape[-1], x.dtype).to(x.device)


@contextlib.contextmanager
def replaying(namespace: Mapping[str, Any], answers: Mapping[str, Callable[..., Any]]) -> Iterator[None]:
    """In the judge, for the block: each name of `answers` resolved in `namespace` (a reference
    module's `vars()`) as the worker resolves it, and answered by the same function (a method
    `fn(state, ...)` with its module's parameters and buffers): the reference then computes what
    the student's code gets with the judge standing in. Put back after."""
    done: list[tuple[Any, str, Any]] = []
    ns = namespace if isinstance(namespace, dict) else dict(namespace)
    try:
        for name, fn in answers.items():
            *path, attr = name.split(".")
            if not path:
                done.append((ns, attr, ns[attr]))
                ns[attr] = fn
                continue
            owner = ns[path[0]]
            for part in path[1:]:
                owner = getattr(owner, part)
            before = (
                owner.__dict__[attr] if isinstance(owner, type) and attr in owner.__dict__ else getattr(owner, attr)
            )
            done.append((owner, attr, before))
            setattr(owner, attr, _as_method(fn) if isinstance(owner, type) and callable(before) else fn)
        yield
    finally:
        for owner, attr, before in reversed(done):
            if isinstance(owner, dict):
                owner[attr] = before
            else:
                setattr(owner, attr, before)


def _as_method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(module: Any, *args: Any, **kwargs: Any) -> Any:
        state = {}
        if isinstance(module, torch.nn.Module):
            state = {**dict(module.named_parameters()), **dict(module.named_buffers())}
        return fn(state, *args, **kwargs)

    return method
