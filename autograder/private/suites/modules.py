"""Module questions: a class the student writes, asked PrairieLearn's way (`Case`: the
reference module and the student's built with the same arguments, the same parameters
loaded, run on the same inputs side by side), and what the class must hold (its parameter
table, no persistent buffer the contract does not list).
"""

import math

import torch

from autograder.judge import shrink
from autograder.judge.failure import Msg
from autograder.messages import t
from autograder.private.suites import failing, tensors
from autograder.protocol import wire


def random_state(module, seed, scale=1.0):
    """{name: float64 tensor} for every parameter of a reference module, seeded: linear
    weights of scale / sqrt(fan_in), layer-norm gains around 1, biases and embeddings
    (`embed.weight`) of moderate size (so that float16 and bfloat16 stay within their
    tolerances): the parameters a module question loads into both modules."""
    out = {}
    for i, (name, p) in enumerate(module.named_parameters()):
        shape = tuple(p.shape)
        if name.endswith("weight") and p.dim() == 1:  # a layer norm's gain
            out[name] = 1.0 + tensors.randn(shape, seed + i, scale=0.2 * scale)
        elif p.dim() == 1:  # a bias
            out[name] = tensors.randn(shape, seed + i, scale=0.2 * scale)
        elif name == "embed.weight":
            out[name] = tensors.randn(shape, seed + i, scale=scale)
        else:
            out[name] = tensors.randn(shape, seed + i, scale=scale / math.sqrt(shape[1]))
    return out


class Case:
    """One call of a graded class: the class as the worker builds it (`ctor()`,
    `ctor_kwargs()`), the judge's parameters (`state`: float64, loaded by name into the
    student's module and the reference's), the forward's inputs (`args`, `kwargs`).

    A subclass says what its question adds: `SOLUTIONS` (the reference's module) and `NAME`
    (the class), `OUT` (the outputs' names), `ARG_NAMES` (the forward's), its constructor's
    arguments, how a case is made (`__init__` sets `state`, `args`, `kwargs`) and, for the
    counterexample search, its named sizes (`named_sizes()`) and a case like it at other sizes
    (`at(sizes, seed)`, None where it does not take them).
    """

    SOLUTIONS = None  # the reference's module (`autograder.private.solutions.<assignment>`)
    NAME = ""  # the graded class, in the student's notebook and in SOLUTIONS
    OUT = ()
    ARG_NAMES = ()
    ISOLATE = None  # None: the judge stands in for the other graded functions and classes; []: none

    # what a subclass says
    def ctor(self):
        """The constructor's positional arguments."""
        raise NotImplementedError

    def ctor_kwargs(self):
        return {}

    def named_sizes(self):
        """This case's named sizes ({"B": 3, ...}): where the counterexample search starts."""
        raise NotImplementedError

    def at(self, sizes, seed):
        """A case like this one at other sizes (None: sizes it does not take)."""
        raise NotImplementedError

    # what every case does
    def reference_module(self):
        return getattr(self.SOLUTIONS, self.NAME)(*self.ctor(), **self.ctor_kwargs())

    @property
    def module(self):
        """`MultiHeadAttention(10, 2, bias=True)`: the class with its arguments."""
        parts = [str(a) for a in self.ctor()] + [f"{k}={v}" for k, v in self.ctor_kwargs().items()]
        return f"{self.NAME}({', '.join(parts)})"

    def construct(self):
        return {"args": list(self.ctor()), "kwargs": dict(self.ctor_kwargs())}

    def opts(self, dtype=torch.float64, device="cpu"):
        """The call's options: the class built, the judge's parameters loaded (float64; shapes
        only on the meta device), the module moved to `dtype`, its inputs on `device`."""
        st = tensors.as_meta(self.state) if device == "meta" else self.state
        out = {"construct": self.construct(), "state": st, "to": {"dtype": wire.dtype_name(dtype)}, "device": device}
        if self.ISOLATE is not None:
            out["isolate"] = list(self.ISOLATE)
        return out

    def reference(self, dtype=torch.float64):
        """The reference module in float64, its parameters rounded to `dtype` first (what the
        student's holds)."""
        m = self.reference_module().double()
        m.load_state_dict({k: v.to(dtype).double() for k, v in self.state.items()})
        return m

    def expected(self, dtype=torch.float64, args=None, kwargs=None):
        """The reference's outputs by name on what the student's module received (inputs and
        parameters rounded to `dtype`), in float64."""
        args = tensors.to(self.args if args is None else args, "cpu", dtype)
        kwargs = tensors.to(self.kwargs if kwargs is None else kwargs, "cpu", dtype)
        with torch.no_grad():
            out = self.reference(dtype)(
                *tensors.to(args, "cpu", torch.float64), **tensors.to(kwargs, "cpu", torch.float64)
            )
        return dict(zip(self.OUT, out if len(self.OUT) > 1 else [out]))

    def describe(self, args=None, kwargs=None, device="cpu", dtype=None):
        """`DecoderBlock(8, 2, 12) on x (3, 5, 8) float64, pad_mask (3, 5) bool`: shapes, never values."""
        args = self.args if args is None else args
        kwargs = self.kwargs if kwargs is None else kwargs
        parts = [f"{n} {tuple(a.shape)} {wire.dtype_name(a.dtype)}" for n, a in zip(self.ARG_NAMES, args)]
        parts += [f"{n} {tuple(v.shape)} {wire.dtype_name(v.dtype)}" for n, v in kwargs.items() if v is not None]
        at = "" if str(device) == "cpu" else t("mha_on_device", device=device)
        module = self.module if dtype is None else f"{self.module}.to({wire.dtype_name(dtype)})"
        return t("mha_call", module=module, inputs=", ".join(parts), at=at)

    def fresh(self):
        """The counterexample search's cases (`shrink.search_module`): this case's named
        sizes, cases like it at other sizes (`at`), and the tensors it sent (never shown again)."""

        def make(sizes, seed):
            case = self.at(sizes, seed)
            if case is None:
                return None

            def reference(state, a, k):
                m = case.reference_module().double()
                m.load_state_dict(state)
                out = m(*a, **k)
                return out if isinstance(out, tuple) else (out,)

            return shrink.ModuleCase(
                case.module, case.construct(), case.state, case.args, case.kwargs, list(case.ARG_NAMES), reference
            )

        return dict(self.named_sizes()), make, [*self.args, *self.kwargs.values(), *self.state.values()]


def check_parameter_table(reply, want, what, missing_cause, shape_cause, extra_cause):
    """A built module's state_dict as the worker listed it (`reply`: a construct call's reply,
    after .to(float64); its `params` and `buffers`, {name: {"shape", "dtype"}}) holds exactly the
    contract's parameters (`want`: {name: shape}), each float64, and nothing else.
    The causes, each a message or None: `missing_cause()` for a name missing,
    `shape_cause(name, got, expected)` for a wrong shape, `extra_cause(name)` for the first
    parameter the contract does not list."""
    params = reply.params or {}
    for pname, shape in want.items():
        if pname not in params:
            failing.fail(
                failing.caused(
                    t("lab_missing_parameter", module=what, name=pname, params=sorted(params)), missing_cause()
                )
            )
        got = tuple(params[pname]["shape"])
        if got != tuple(shape):
            failing.fail(
                failing.caused(
                    t("mha_parameter_shape", module=what, name=pname, got=got, expected=tuple(shape)),
                    shape_cause(pname, got, tuple(shape)),
                )
            )
        if params[pname]["dtype"] != "float64":
            failing.fail(t("mha_parameter_not_moved", module=what, name=pname, dtype=params[pname]["dtype"]))
    extra = sorted(set(params) - set(want))
    if extra:
        failing.fail(failing.caused(t("lab_extra_parameter", module=what, name=extra[0]), extra_cause(extra[0])))
    check_no_persistent_buffer(reply, want, what)


def check_no_persistent_buffer(reply, want, what):
    """A built module's state_dict holds no persistent buffer the contract does not list
    (`want`: its names): the judge loads the contract's names, as a training run's
    load_state_dict does, and a key it has no value for breaks that load."""
    extra = sorted(set(reply.buffers or {}) - set(want))
    if extra:
        short = extra[0].rsplit(".", 1)[-1]
        failing.fail(
            failing.caused(
                t("lab_persistent_buffer", module=what, name=extra[0]), Msg("cause_lab_persistent_buffer", short=short)
            )
        )
