"""What the seq2seq_attention suites share: the judge's parameters for a module
(sent as a state dict and loaded by name into the student's module, whose
parameter names and shapes the contract fixes), module calls, and the
gradients of every parameter against the reference module's.
"""

import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.suites import calls, causes, failing, modules, tensors, value_checks
from autograder.protocol import wire


def lengths_of(B, T, seed, shortest=1):
    """B lengths in shortest .. T, unsorted, the first one T (a full row)."""
    g = tensors.gen(seed)
    lengths = torch.randint(shortest, T + 1, (B,), generator=g)
    lengths[0] = T
    return lengths


def tokens(B, T, V, lengths, seed):
    """(B, T) int64 symbols 3 .. V - 1, PAD (0) after each length."""
    src = torch.randint(3, V, (B, T), generator=tensors.gen(seed))
    return torch.where(tensors.lengths_mask(lengths, T), src, 0)


def random_state(module, seed, scale=0.6):
    """{name: float64 tensor} for every parameter of a reference module (seeded, moderate values)."""
    return {
        n: tensors.randn(tuple(p.shape), seed + i, scale=scale) for i, (n, p) in enumerate(module.named_parameters())
    }


def describe(module, inputs, device="cpu"):
    """`Encoder(11, 4, 6) on src (3, 5) int64, src_lengths (3,) int64`: shapes, never values."""
    parts = [f"{n} {tuple(v.shape)} {wire.dtype_name(v.dtype)}" for n, v in inputs]
    return t("lab_call", module=module, inputs=", ".join(parts))


class LabCase(modules.Case):
    """One call of a lab module (`modules.Case`): its parameters sent in the dtype it is moved
    to, described with the lab's words (`describe`)."""

    SOLUTIONS = ref

    def opts(self, dtype=torch.float64):
        return {
            "construct": self.construct(),
            "state": tensors.to(self.state, dtype=dtype),
            "to": {"dtype": wire.dtype_name(dtype)},
        }

    def what(self, args=None, dtype=torch.float64):
        args = args if args is not None else self.args
        at = "" if dtype == torch.float64 else f" [{wire.dtype_name(dtype)}]"
        return describe(self.module + at, list(zip(self.ARG_NAMES, args)))


def check_parameters(sub, name, construct, want, what):
    """The module built from `construct` has exactly the contract's parameter names
    and shapes (`want`: {name: shape}), moved by .to(float64)."""
    reply = sub.call(name, options=CallOptions(construct=construct, to={"dtype": "float64"}, invoke=False))
    if not reply.ok:
        calls.call_failed(what, reply.error, hint=False)
    modules.check_parameter_table(
        reply,
        want,
        what,
        lambda: Msg("cause_lab_parameter_names"),
        lambda name, _got, _expected: Msg("cause_lab_parameter_shape", name=name),
        lambda _first: Msg("cause_lab_extra_parameter"),
    )


def check_param_grads(reply, reference, state, args, kwargs, cot, cfg, what):
    """The gradients the worker computed for every parameter (with cotangents `cot`)
    against the reference module's, loaded with the same `state`."""
    m = reference
    out = m(*args, **kwargs)
    outs = [o for o in (out if isinstance(out, tuple) else (out,))]
    pairs = [(o, g) for o, g in zip(outs, cot) if g is not None and o.requires_grad]
    names = list(state)
    params = dict(m.named_parameters())
    r_grads = torch.autograd.grad(
        [o for o, _ in pairs], [params[n] for n in names], [g for _, g in pairs], allow_unused=True
    )
    grads = reply.grads or {}
    line = calls.grads_error(grads)
    if line is not None:
        failing.fail(calls.with_cause(line, causes.detached(), calls.gradients_of(what)))
    got = grads.get("params") or {}
    for name, rg in zip(names, r_grads):
        g = got.get(name)
        label = t("gradient_wrt_parameter", what=what, name=name)
        if g is None:
            failing.fail(
                failing.caused(
                    t("no_gradient_reached_parameter", what=label), Msg("cause_lab_parameter_unused", name=name)
                )
            )
        value_checks.assert_close(g, rg if rg is not None else torch.zeros_like(g.double()), label, cfg, torch.float64)
