"""What the hidden suites share: calling the submission, checking what came back,
and failure messages that name the bug without showing hidden data.

Every check that fails calls `fail(symptom, cause)` (raising `failure.Failure`). A symptom says what was checked,
what came back against what was expected (shapes, dtypes, devices, the max
abs error and its index), and a likely cause when the output shows one. It
never prints the hidden inputs or the expected tensors.

Every text a student reads comes from the message catalog (`t(key, ...)`,
`autograder/messages/suites.yml`, in each of the course's languages). A
symptom is rendered when the check fails (the language is the one in force
then); a likely cause stays data, `Msg(key, **fields)`, beside the symptom
(`caused`), never inside its words: the judge renders it where it is shown
and a class report counts it by key.

The yardstick is always the reference (`solutions/`, run here in the judge in
float64 on the CPU) or torch's own modules, never the student's code.
"""

import contextlib
import math
import re

import pytest
import torch

from autograder.judge import counterexample, shrink
from autograder.judge.failure import Failure, Msg, Said
from autograder.judge.remote import CallOptions, cell_label
from autograder.messages import number, t
from autograder.protocol import wire
from autograder.protocol.grads import vjp

_CFG = []  # the cfg the judge grades this submission with (conftest.py sets it for each run)


def use_cfg(cfg):
    """The suites' one source of settings for the run that starts (None: it ended):
    the judge's cfg (`KitPlugin.kit_cfg`), never a grading.yml found in the working folder."""
    _CFG[:] = [cfg] if cfg is not None else []


def judge_cfg():
    """The cfg of the judge's run in progress (what the `cfg` fixture gives the tests)."""
    if not _CFG:
        raise RuntimeError("checks.use_cfg(): KitPlugin.kit_cfg missing")  # the suites run under the judge only
    return _CFG[0]


def fail(symptom, cause=None, form=False):
    """Fail the check: `symptom` is its words or a `Said` (`caused`), `cause` a `Msg` or None."""
    if isinstance(symptom, Said):
        if cause is not None:
            raise TypeError(symptom, cause)  # a Said holds its cause already
        symptom, cause = symptom.symptom, symptom.cause
    raise Failure(symptom, cause, form=form)


def fail_form(message):
    """A typed answer that is missing, cannot be read or is not complete: about its form, never
    whether it is right, so a student reads it even where the course holds back which answers
    are wrong until the deadline (`autograder.release`)."""
    fail(message, form=True)


def once_per_submission(store, sub, make):
    """`make()` for the submission `sub`, made once and shared by the checks that read it (a
    training run: one worker call for four checks). A failure (`fail`) is kept and raised again
    for each check. `store` is the suite module's own dict, {id(sub): (sub, value or message)}:
    it keeps one submission, the one being graded."""
    key = id(sub)
    if key in store and store[key][0] is sub:
        kept = store[key][1]
        if isinstance(kept, Failure):
            raise kept.again()
        return kept
    store.clear()  # the previous submission's: never needed again
    try:
        kept = make()
    except Failure as exc:
        store[key] = (sub, exc)
        raise
    store[key] = (sub, kept)
    return kept


def typed_answers(data, missing, missing_cause, unreadable, rule_cause):
    """The answers of a typed-answer cell as the reader read it (`by_hand`, the shapes
    drill): `data` is its record ({"cells", "labels", "problem", "answers"}) or None.
    Fails with the message keys given (literal at each caller, as the catalog's test
    reads them) when there is no such cell or it breaks the cell's rule."""
    if data is None:
        fail_form(caused(t(missing), Msg(missing_cause)))
    where = ", ".join(cell_label(label, index) for index, label in zip(data["cells"], data["labels"]))
    problem = data["problem"]
    if problem is not None:
        fail_form(caused(t(unreadable, cell=where), Msg(rule_cause, reason=Msg(problem["key"], **problem["fields"]))))
    return data["answers"]


# -- messages -------------------------------------------------------------------
def caused(symptom, cause, sep=" "):
    """`symptom` (its words) with its likely cause (a `Msg`, or None: just the symptom), for
    `fail`; `sep` ends the symptom where a cause follows it ("Likely cause: ..." once rendered)."""
    if isinstance(symptom, Said):  # a symptom that has its cause already keeps it
        return symptom
    return Said(f"{symptom}{sep}", cause) if cause is not None else symptom


def raised(reply, type_name):
    """Whether the call's `reply` reports a `type_name` raised by the student's code: the type
    the worker reported (`Reply.raised`), never a prefix of the line that words it."""
    return reply.raised == type_name


# Causes several checks name: one wording each, so the feedback says each once.
def padding_leak_cause(weights, allowed, unmasked):
    """The likely cause when weights leak onto disallowed keys: `allowed` (bool, the
    weights' shape) marks the allowed keys, `unmasked` is the reference's weights with
    no mask at all."""
    leak = weights[~allowed].abs().max()
    if weights[allowed].abs().max() < 1e-6:
        return Msg("cause_polarity_real_token")
    if matches(weights, unmasked):
        return mask_ignored()
    if leak > 1e-6:
        return Msg("cause_after_softmax_or_zero_fill")
    return Msg("cause_finite_fill_use_inf")


def mask_ignored():
    return Msg("cause_mask_ignored")


def in_place():
    return Msg("cause_in_place")


def detached():
    return Msg("cause_detached")


# -- inputs -------------------------------------------------------------------
def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(shape, seed, dtype=torch.float64, scale=1.0):
    return torch.randn(shape, generator=gen(seed), dtype=torch.float64).mul(scale).to(dtype)


def rand_mask(shape, seed, p_true=0.7, ensure_row_dim=-1):
    """A random bool mask with at least one True along `ensure_row_dim` in every row."""
    m = torch.rand(shape, generator=gen(seed)) < p_true
    first = torch.zeros(shape, dtype=torch.bool)
    first.select(ensure_row_dim, 0).fill_(True)
    return m | first


def lengths_mask(lengths, T):
    return torch.arange(T).unsqueeze(0) < torch.as_tensor(lengths).unsqueeze(1)  # (B, T)


def to(value, device=None, dtype=None):
    """Cast the floating tensors in a (nested) value; other tensors only move."""
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() and dtype is not None:
            value = value.to(dtype)
        return value.to(device) if device is not None else value
    if isinstance(value, (list, tuple)):
        return type(value)(to(v, device, dtype) for v in value)
    if isinstance(value, dict):
        return {k: to(v, device, dtype) for k, v in value.items()}
    return value


def as_meta(value):
    """The same value with every tensor on the meta device (shapes and dtypes only)."""
    if isinstance(value, torch.Tensor):
        return torch.empty(value.shape, dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(as_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: as_meta(v) for k, v in value.items()}
    return value


# -- calling ------------------------------------------------------------------
def describe_call(name, args, kwargs=None):
    """`masked_softmax(scores (2, 3) float64, mask (2, 3) bool)`: shapes, never values."""

    def d(v):
        if isinstance(v, torch.Tensor):
            return f"{tuple(v.shape)} {wire.dtype_name(v.dtype)}"
        if isinstance(v, (int, float, bool, str)) or v is None:
            return repr(v)
        return type(v).__name__

    parts = [d(a) for a in args] + [f"{k}={d(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(parts)})"


# Causes read from an error line alone say little: a check that knows more replaces
# them (keys of the catalog; a message holds one in any language).
WEAK_CAUSES = ("cause_broadcast",)


def is_weak(cause):
    """Whether a likely cause (a `Msg` or None) is one of WEAK_CAUSES."""
    return cause is not None and cause.key in WEAK_CAUSES


# What an error raised by the student's code usually means: (substrings of the
# error line, the catalog key of its likely cause). Read from the error the
# worker reports, nothing else; the error lines are torch's, in English.
ERROR_CAUSES = [
    (("must be a 3D tensor", "batch1 must be", "batch2 must be"), "cause_bmm_3d"),
    (("doesn't match the broadcast shape",), "cause_in_place_small"),
    (
        (
            "expected scalar type",
            "to have the same dtype",
            "same dtype",
            "dtype mismatch",
            "found Double",
            "found Float",
            "found Half",
            "found BFloat16",
        ),
        "cause_dtype_mix",
    ),
    (
        (
            "mat1 and mat2 shapes cannot be multiplied",
            "same reduction dim",
            "Expected size for first two dimensions",
            "size mismatch",
            "shapes cannot be multiplied",
        ),
        "cause_matmul_operand",
    ),
    (("must match the size of tensor", "Attempting to broadcast a dimension"), "cause_broadcast"),
    (("Dimension out of range",), "cause_axis_from_front"),
    (("cannot be called on meta tensors", "Cannot copy out of meta tensor", "meta tensors"), "cause_values_in_python"),
    (
        ("Can't call numpy() on Tensor that requires grad", "to numpy", "numpy()", "unsupported ScalarType"),
        "cause_numpy_round_trip",
    ),
    (("cannot be converted to type",), "cause_fill_overflow"),
    (
        (
            "is not on the expected device",
            "Expected all tensors to be on the same device",
            "device type",
            "on the same device",
        ),
        "cause_no_device",
    ),
    (
        ("leaf Variable that requires grad is being used in an in-place operation", "modified by an inplace operation"),
        "cause_in_place",
    ),
]


# What the worker says about gradients it could not compute (it runs the student's
# code and writes plain English): (its exact words, the catalog key that says them).
WORKER_GRAD_ERRORS = [
    (re.compile(r"the outputs do not depend on the inputs through autograd \(detached\?\)"), "grads_not_connected"),
    (re.compile(r"expected (?P<n>\d+) output tensors, got (?P<got>\d+)"), "grads_output_count"),
]


def grads_error(error):
    """The worker's gradient error in the language in force (torch's own errors as they are)."""
    for pattern, key in WORKER_GRAD_ERRORS:
        m = pattern.fullmatch(error.strip())
        if m:
            return t(key, **m.groupdict())
    return error


# What the notebook reader's source checks found (`sub.submission.findings`, in
# English): (its words, the catalog key that says them in the language in force).
SOURCE_FINDINGS = [
    (re.compile(r"cell (?P<cell>\d+), line (?P<line>\S+): uses torch's built-in `(?P<name>[^`]+)`"), "finding_builtin"),
    (re.compile(r"cell (?P<cell>\d+), line (?P<line>\S+): looks up `(?P<name>[^`]+)` by name"), "finding_lookup"),
    (
        re.compile(r"cell (?P<cell>\d+), line (?P<line>\S+): uses torch's tracing internals \(`(?P<name>[^`]+)`\)"),
        "finding_tracing",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+), line (?P<line>\S+): reaches for the grader's own modules \(`(?P<name>[^`]+)`\)"
        ),
        "finding_kit",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+): could not be parsed to check it \((?P<why>.*)\), and it names `(?P<name>[^`]+)`"
        ),
        "finding_unparsed_names",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+): could not be parsed to check it \((?P<why>.*)\), and uses torch's tracing "
            r"internals \(`(?P<name>[^`]+)`\)"
        ),
        "finding_unparsed_tracing",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+): could not be parsed to check it \((?P<why>.*)\), and reaches for the grader's "
            r"own modules \(`(?P<name>[^`]+)`\)"
        ),
        "finding_unparsed_kit",
    ),
]


def finding_text(finding, cells=()):
    """A source check's finding in the language in force (one it does not know: as it is), its
    cell named as the student sees it among the submission's `cells` (`remote.cell_label`:
    the prompt and the first line)."""
    labels = {c.index: getattr(c, "label", None) for c in cells}
    for pattern, key in SOURCE_FINDINGS:
        m = pattern.fullmatch(str(finding))
        if m:
            index = int(m["cell"])
            return t(key, **{**m.groupdict(), "cell": cell_label(labels.get(index), index)})
    return str(finding)


def error_hint(error):
    """A likely cause for an error line the worker reported (or None)."""
    for needles, cause in ERROR_CAUSES:
        if any(n in error for n in needles):
            return Msg(cause)
    return None


def with_cause(error, cause=None, frame=None):
    """The worker's error line with a likely cause when one is known: a `Said` for `fail`, or
    the line alone. `frame(line)`: the symptom that holds the line at its end (the call it
    answers before it: `after(what)`)."""
    error = error.rstrip()
    cause = cause if cause is not None else error_hint(error)
    frame = frame or (lambda line: line)
    if cause is None:
        return frame(error)
    return caused(frame(error if error.endswith((".", "!", "?", ":")) else f"{error}."), cause)


def after(what):
    """A `with_cause` frame: the error line after `what` (the call it answers)."""
    return lambda line: f"{what} {line}"


def gradients_of(what):
    """A `with_cause` frame: the worker's error about the gradients of `what`."""
    return lambda line: t("gradients_of", what=what, error=line)


@contextlib.contextmanager
def explain_errors(cause):
    """Inside: a failure that reports an error raised by the student's code,
    with no likely cause or only a weak one read from the error line alone
    (WEAK_CAUSES), takes `cause()`'s (None: the message stays). `cause()` is a second look
    (`fail_explained`): it runs after the submission's last verdict call."""
    try:
        yield
    except Failure as exc:
        symptom = exc.symptom
        if exc.raised is None or (exc.cause is not None and not is_weak(exc.cause)):
            raise
        inner = exc.explain  # a narrower explain_errors' look, tried first

        def explain():
            why = cause()
            if not why:
                return None
            return caused(f"{symptom.rstrip().rstrip('.')}.", why)

        exc.explain = explain if inner is None else (lambda: inner() or explain())
        raise


def fail_explained(message, explain):
    """Fail with `message`; `explain()` returns a `Said` with a likely cause, or None. A cause
    that calls the student's code again (`sub.probe`) is a second look: it runs once every
    verdict call of the submission is made (`KitPlugin.second_looks`), so that what it
    tells the student's code reaches no score."""
    exc = Failure(message)
    exc.explain = explain
    raise exc


def call(sub, name, args, kwargs=None, **opts):
    """Call the student's `name`; fail with its error unless it returned."""
    reply = sub.call(name, args, kwargs, CallOptions(**opts))
    if not reply.ok:
        call_failed(describe_call(name, args, kwargs), reply.error, raised=reply.raised)
    return reply


def call_failed(what, error, cause=None, hint=True, raised=None):
    """Fail with the error a call of the student's code raised: `what` (the call), then the
    error with its likely cause (`cause`, a `Msg`, else one known for the error where `hint`).
    The failure's kind is the error, whatever the inputs: the checks that hit it are one line
    of the feedback (`scoring`), not one per input. `raised`: the exception's type, where the
    call raised one (`Reply.raised`: what `explain_errors` asks of the failure)."""
    error = error.rstrip()
    said = with_cause(error, cause, after(what)) if hint or cause is not None else after(what)(error)
    try:
        fail(said)
    except Failure as exc:
        exc.kind = error  # read by the judge's KitPlugin
        exc.raised = raised
        raise


def outputs(value, what, out_names):
    """Split a return value into named tensors: one tensor, or a tuple of them."""
    if len(out_names) == 1:
        return {out_names[0]: tensor(value, f"{what}")}
    if not isinstance(value, (tuple, list)) or len(value) != len(out_names):
        got = (
            t("kind_sequence", type=type(value).__name__, n=len(value))
            if isinstance(value, (tuple, list))
            else _kind(value)
        )
        fail(t("returned_not_tuple", what=what, got=got, names=", ".join(out_names)))
    return {n: tensor(v, f"{what} -> {n}") for n, v in zip(out_names, value)}


def _kind(v):
    if isinstance(v, wire.Other):
        return t("kind_object", type=v.type_name)
    return "None" if v is None else t("kind_object", type=type(v).__name__)


def tensor(value, what):
    if not isinstance(value, torch.Tensor):
        number = isinstance(value, (int, float)) and not isinstance(value, bool)  # as the wire brings a Python number
        fail(caused(t("not_a_tensor", what=what, got=_kind(value)), Msg("cause_python_number") if number else None))
    return value


def device_of(x):
    return getattr(x, "wire_device", str(x.device))


def same_device(got, want):
    want = str(want)
    return got == want or (want == "cuda" and got.startswith("cuda")) or (got == "cuda:0" and want == "cuda")


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
            fail(caused(t("lab_missing_parameter", module=what, name=pname, params=sorted(params)), missing_cause()))
        got = tuple(params[pname]["shape"])
        if got != tuple(shape):
            fail(
                caused(
                    t("mha_parameter_shape", module=what, name=pname, got=got, expected=tuple(shape)),
                    shape_cause(pname, got, tuple(shape)),
                )
            )
        if params[pname]["dtype"] != "float64":
            fail(t("mha_parameter_not_moved", module=what, name=pname, dtype=params[pname]["dtype"]))
    extra = sorted(set(params) - set(want))
    if extra:
        fail(caused(t("lab_extra_parameter", module=what, name=extra[0]), extra_cause(extra[0])))
    check_no_persistent_buffer(reply, want, what)


def check_no_persistent_buffer(reply, want, what):
    """A built module's state_dict holds no persistent buffer the contract does not list
    (`want`: its names): the judge loads the contract's names, as a training run's
    load_state_dict does, and a key it has no value for breaks that load."""
    extra = sorted(set(reply.buffers or {}) - set(want))
    if extra:
        short = extra[0].rsplit(".", 1)[-1]
        fail(
            caused(
                t("lab_persistent_buffer", module=what, name=extra[0]), Msg("cause_lab_persistent_buffer", short=short)
            )
        )


def check_meta(x, what, shape=None, dtype=None, device=None, hint=None):
    """Shape, dtype and device of a returned tensor, with a likely cause.

    `hint(got_shape, expected_shape)` may name a likely cause for a wrong shape.
    """
    if shape is not None and tuple(x.shape) != tuple(shape):
        got, want = tuple(x.shape), tuple(shape)
        cause = hint(got, want) if hint else None
        fail(caused(t("shape_differs", what=what, got=got, expected=want), cause or shape_cause(got, want), ". "))
    if dtype is not None and x.dtype != dtype:
        cause = Msg("cause_created_float32") if dtype != torch.float32 and x.dtype == torch.float32 else None
        fail(
            caused(t("dtype_differs", what=what, got=wire.dtype_name(x.dtype), expected=wire.dtype_name(dtype)), cause)
        )
    if device is not None and not same_device(device_of(x), device):
        fail(caused(t("device_differs", what=what, got=device_of(x), expected=device), Msg("cause_no_device_short")))


def shape_cause(got, want):
    """A likely cause for a tensor of shape `got` where `want` was expected (or None)."""
    if (
        len(got) == len(want) - 1
        and len(want) >= 3
        and got[0] == want[0] * want[1]
        and tuple(got[1:]) == tuple(want[2:])
    ):
        return Msg("cause_axes_folded")
    if len(got) == len(want) and sorted(got) == sorted(want):
        return Msg("cause_axes_swapped")
    if len(got) == len(want) + 1 and 1 in got:
        return Msg("cause_singleton_axis")
    if len(got) > len(want):
        return Msg("cause_silent_broadcasting")
    return None


# -- values -------------------------------------------------------------------
def _index(flat_index, shape):
    idx = []
    for s in reversed(shape):
        idx.append(flat_index % s)
        flat_index //= s
    return tuple(reversed(idx))


def matches(got, want):
    """For likely causes: does `got` equal an alternative formula's `want` as
    closely as the judge's cfg asks of the right answer in got's dtype?"""
    atol, rtol = judge_cfg().tolerance(got.dtype)
    g = got.detach().double().cpu()
    w = want.detach().double().cpu()
    return g.shape == w.shape and not torch.isnan(g).any() and torch.allclose(g, w, atol=atol, rtol=rtol)


FLOAT32_ROUNDING = 8 * torch.finfo(torch.float32).eps


def assert_close(got, expected, what, cfg, dtype=None, hint=None):
    """`got` within the grading.yml tolerance of `expected` (both any dtype); `hint(got, expected)`,
    the one signature of every hint, may name a likely cause."""
    dtype = dtype or got.dtype
    atol, rtol = cfg.tolerance(dtype)
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    if g.shape != e.shape:
        fail(
            caused(
                t("shape_differs", what=what, got=tuple(g.shape), expected=tuple(e.shape)),
                shape_cause(tuple(g.shape), tuple(e.shape)),
                ". ",
            )
        )
    why = None
    bad_nan = torch.isnan(g) & ~torch.isnan(e)
    if bad_nan.any():
        i = _index(int(bad_nan.reshape(-1).nonzero()[0]), g.shape) if g.dim() else ()
        why = t("nan_values", n=int(bad_nan.sum()), index=i)
    else:
        err = (g - e).abs().nan_to_num(nan=0.0, posinf=math.inf)
        over = err - (atol + rtol * e.abs())
        if (over > 0).any():
            k = int(over.reshape(-1).argmax())
            i = _index(k, g.shape) if g.dim() else ()
            why = t(
                "values_differ",
                n=int((over > 0).sum()),
                total=g.numel(),
                err=number(float(err.reshape(-1)[k]), ".3g"),
                index=i,
                dtype=wire.dtype_name(dtype),
                atol=number(atol, "g"),
                rtol=number(rtol, "g"),
            )
    if why:
        cause = hint(got, expected) if hint else None
        if cause is None and dtype == torch.float64 and not bad_nan.any():
            # float32's own rounding, a few units of its last place on the values' scale: wider
            # gaps (numbers typed to 4 decimals) are within float32's tolerance but no detour
            if bool((err <= FLOAT32_ROUNDING * (e.abs() + e.abs().max())).all()):
                cause = Msg("cause_float32_detour")
        fail(caused(f"{what}: {why}.", cause))


def weights_hint(got, expected, mask=None):
    """A likely cause for attention weights that differ from the reference."""
    g, e = got.detach().double(), expected.detach().double()
    # a sum of weights is 1 to within its rounding: float16 and bfloat16 lose that much per weight
    eps = torch.finfo(got.dtype).eps if got.is_floating_point() else 0.0
    sum_tol = max(1e-3, (g.shape[-1] if g.dim() else 1) * eps)
    if torch.isnan(g).any():
        if mask is not None and (~mask.expand_as(g)).all(-1).any():
            return dead_rows_cause(g, ~mask.cpu().expand_as(g).any(-1))
        return Msg("cause_nan_overflow")
    if g.dim() >= 2:
        sums_last = g.sum(-1)
        sums_prev = g.sum(-2)
        if not torch.allclose(sums_last, e.sum(-1), atol=sum_tol) and torch.allclose(
            sums_prev, torch.ones_like(sums_prev), atol=sum_tol
        ):
            return Msg("cause_columns_sum_to_one")
        if g.shape[-1] == g.shape[-2] and torch.allclose(g.transpose(-1, -2), e, atol=1e-4):
            return Msg("cause_weights_transposed")
    m = mask.cpu().expand_as(g) if mask is not None else torch.ones_like(g, dtype=torch.bool)
    if g.dim() >= 1 and g.shape[-1] > 1:
        n = m.sum(-1, keepdim=True)
        uniform = torch.where(m, 1.0 / n.clamp(min=1).double(), torch.zeros_like(g))
        live = m.any(-1)
        if (
            live.any()
            and torch.allclose(g[live], uniform[live], atol=1e-6)
            and not torch.allclose(e[live], uniform[live], atol=1e-3)
        ):
            return Msg("cause_uniform_weights")
    if mask is not None:
        dead = ~m.any(-1)  # rows with no allowed key
        if dead.any() and g[dead].abs().max() > 0 and (g[~dead] - e[~dead]).abs().max() < 1e-4:
            return dead_rows_cause(g, dead) or Msg("cause_dead_row_nonzero")
        leak = g[~m].abs()
        if leak.numel() and leak.max() > 0:
            inside = g[m].abs()
            if inside.numel() and inside.max() < 1e-6:
                return Msg("cause_polarity_where_false")
            return Msg("cause_masked_keys_leak")
        allowed = m.any(-1)
        rows = g.sum(-1)
        if allowed.any() and not torch.allclose(rows[allowed], torch.ones_like(rows[allowed]), atol=sum_tol):
            return Msg("cause_not_renormalised")
    rows = g.sum(-1)
    if not torch.allclose(rows, e.sum(-1), atol=sum_tol):
        return Msg("cause_not_softmax_last")
    return None


def dead_rows_cause(weights, dead, unmasked=None, masked=None):
    """A likely cause for rows with no allowed key (`dead`: a bool tensor over
    weights.shape[:-1]) that are not all zero, from what those rows hold.
    `unmasked`: the reference's weights for the same call without a mask; `masked`: with
    it (an additive mask is named only where it reproduces every row: the others right)."""
    w = weights.detach().double().cpu()
    dead = dead.cpu().expand(w.shape[:-1])
    rows = w[dead]
    if rows.numel() == 0:
        return None
    if torch.isnan(rows).any():
        return Msg("cause_dead_nan")
    if unmasked is not None and matches(weights, unmasked.expand(w.shape)):
        return mask_ignored()
    T = rows.shape[-1]
    if torch.allclose(rows, torch.full_like(rows, 1.0 / T), atol=1e-3):
        return Msg("cause_dead_uniform")
    if unmasked is not None and masked is not None:
        plain, right = (x.detach().double().cpu().expand(w.shape) for x in (unmasked, masked))
        if not torch.isnan(w).any() and torch.allclose(w, torch.where(dead.unsqueeze(-1), plain, right), atol=1e-4):
            return Msg("cause_dead_additive_mask")
    return None


def check_dead_rows(what, weights, dead, unmasked=None, others=(), masked=None):
    """Rows with no allowed key: all-zero weights (and `others`, e.g. the context, all zero there), never NaN."""
    w = weights.detach().double().cpu()
    d = dead.cpu().expand(w.shape[:-1])
    bad = torch.isnan(w).any() or (w[d].abs().max() != 0 if d.any() else False)
    for o, o_dead in others:
        o = o.detach().double().cpu()
        bad = bad or torch.isnan(o).any() or (o[o_dead.cpu()].abs().max() != 0 if o_dead.any() else False)
    if bad:
        cause = dead_rows_cause(weights, dead, unmasked, masked)
        symptom = t("dead_rows_weights_output", what=what) if others else t("dead_rows_weights", what=what)
        fail(caused(symptom, cause, ". "))


def check_outputs(got, expected, what, cfg, dtype, device, hints=None, shape_hints=None):
    """Each named output: shape, dtype, device, then values (not on meta).

    Values of the weights are checked first: their pattern tells the most.
    """
    for name, exp in expected.items():
        check_meta(got[name], f"{what} -> {name}", tuple(exp.shape), dtype, device, hint=(shape_hints or {}).get(name))
    for name in sorted(expected, key=lambda n: n != "weights"):
        out, exp = got[name], expected[name]
        if str(device) != "meta":
            hint = (hints or {}).get(name)
            assert_close(out, exp, f"{what} -> {name}", cfg, dtype, hint=hint)


def reference_outputs(ref_fn, args, kwargs, out_names):
    """The reference's outputs in float64 on the CPU, as a dict by name."""
    with torch.no_grad():
        value = ref_fn(*to(args, "cpu", torch.float64), **to(kwargs or {}, "cpu", torch.float64))
    if len(out_names) == 1:
        return {out_names[0]: value}
    return dict(zip(out_names, value))


# -- families -----------------------------------------------------------------
def _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts):
    """Call the student's `name` on the inputs cast to `dtype` and moved to `device`:
    (its outputs by name, the reference's on the inputs as given, the call described)."""
    args_d = to(args, device, dtype)
    kwargs_d = to(kwargs or {}, device, dtype)
    if str(device) == "meta":
        args_d, kwargs_d = as_meta(args_d), as_meta(kwargs_d)
    reply = call(sub, name, args_d, kwargs_d, device=str(device), **opts)
    what = describe_call(name, args_d, kwargs_d)
    return outputs(reply.value, what, out_names), reference_outputs(ref_fn, args, kwargs, out_names), what


def check_values(
    sub,
    cfg,
    name,
    args,
    kwargs,
    ref_fn,
    out_names,
    *,
    dtype=torch.float64,
    device="cpu",
    hints=None,
    shape_hints=None,
    **opts,
):
    """The student's outputs against the reference on the same inputs."""
    got, expected, what = _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts)
    with counterexample_on_failure(sub, cfg, name, args, kwargs, ref_fn, got, expected, dtype, device, opts):
        check_outputs(got, expected, what, cfg, dtype, device, hints, shape_hints)
    return got, expected


# Options of a call that make it more than a function of its arguments (a module built
# and loaded, functions passed in, gradients asked): no function counterexample is searched
# for (a module's values checks search with `module_counterexample_on_failure`).
_NOT_A_PLAIN_CALL = ("construct", "state", "to", "call_with", "answer", "cotangents", "trace", "return_inputs")


@contextlib.contextmanager
def counterexample_on_failure(sub, cfg, name, args, kwargs, ref_fn, got, expected, dtype, device, opts):
    """Inside: a failed value check of a function (`got`: outputs of the reference's shapes
    and of `dtype`, whose values differ from `expected`) carries the smallest input found
    where the student's function and the reference differ (`autograder.judge.counterexample`),
    as the feedback lines its exception holds (`counterexample`); at most one per question.
    The search is a second look: the exception holds it, and the judge runs it once every
    verdict call of the submission is made (`KitPlugin.second_looks`)."""
    try:
        yield
    except pytest.fail.Exception as exc:
        if _values_differ(got, expected, dtype, cfg) and not hasattr(exc, "counterexample"):
            out_names = list(expected)
            exc.counterexample = lambda: _counterexample(
                sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, opts
            )
        raise


def _values_differ(got, expected, dtype, cfg):
    """Outputs of the reference's names, shapes and `dtype` whose values are not close enough:
    a failure a counterexample can show (not a wrong shape, dtype, a missing output or one
    without values: on the meta device)."""
    return all(
        n in got and got[n].shape == e.shape and got[n].dtype == dtype and got[n].is_meta == e.is_meta
        for n, e in expected.items()
    ) and not close_enough(got, expected, cfg)


def _counterexample(sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, opts):
    """The feedback lines of a counterexample for a failed value check of `name`, or None."""
    probe = getattr(sub, "probe", None)
    if probe is None or str(device) != "cpu" or any(opts.get(k) for k in _NOT_A_PLAIN_CALL):
        return None
    limits = shrink.budget(cfg)
    spent = shrink.ledger(sub, name)
    if spent.spent(limits):
        return None
    options = CallOptions(**opts)

    def student(a, k, seconds):
        return _as_outputs(probe(name, to(a, device, dtype), to(k, device, dtype), options, seconds), out_names, dtype)

    def reference(a, k):  # on the inputs as the student's function gets them (rounded to `dtype`)
        out = shrink.refusing(reference_outputs, ref_fn, to(a, "cpu", dtype), to(k, "cpu", dtype), out_names)
        return out if all(isinstance(v, torch.Tensor) for v in out.values()) else None

    found = shrink.search_function(
        name, list(args), dict(kwargs or {}), student, reference, _differs(cfg, dtype), limits, spent
    )
    if found is None:
        return None
    if dtype != torch.float64:  # shown as the student's function got them
        found.args, found.kwargs = to(found.args, "cpu", dtype), to(found.kwargs, "cpu", dtype)
    arg_names = counterexample.parameter_names(ref_fn, len(found.args))
    lower = wire.dtype_name(dtype) if dtype != torch.float64 else ""
    return counterexample.render(name, arg_names, found, limits, dtype=lower)


@contextlib.contextmanager
def module_counterexample_on_failure(sub, cfg, name, got, expected, dtype, device, sizes, make, sent=()):
    """`counterexample_on_failure` for a module `name` (a class the worker builds and loads
    parameters into): the smallest case found from the failing case's named `sizes`, each
    made fresh by `make(sizes, seed)` (a `shrink.ModuleCase`, or None); `sent`: the
    failing case's tensors (inputs, parameters), never shown again."""
    try:
        yield
    except pytest.fail.Exception as exc:
        if _values_differ(got, expected, dtype, cfg) and not hasattr(exc, "counterexample") and str(device) == "cpu":
            exc.counterexample = lambda: _module_counterexample(sub, cfg, name, expected, dtype, sizes, make, sent)
        raise


def _module_counterexample(sub, cfg, name, expected, dtype, sizes, make, sent):
    """The feedback lines of a counterexample for a failed value check of a module `name`, or None."""
    probe = getattr(sub, "probe", None)
    spent = shrink.ledger(sub, name)
    limits = shrink.budget(cfg)
    if probe is None or spent.spent(limits):
        return None
    out_names = list(expected)
    wire_dtype = wire.dtype_name(dtype)

    def student(case, seconds):
        options = CallOptions(construct=case.construct, state=to(case.state, dtype=dtype), to={"dtype": wire_dtype})
        reply = probe(name, to(case.args, "cpu", dtype), to(case.kwargs, "cpu", dtype), options, seconds)
        return _as_outputs(reply, out_names, dtype)

    found = shrink.search_module(
        name,
        dict(sizes),
        lambda at, seed: _rounded(make(at, seed), dtype),
        student,
        out_names,
        _differs(cfg, dtype),
        limits,
        spent,
        [*sent, *expected.values()],
    )
    return None if found is None else counterexample.render_module(found, limits)


def _rounded(case, dtype):
    """A module case whose reference sees what the student's module holds in `dtype`
    (its parameters and float inputs rounded to it first)."""
    if case is None or dtype == torch.float64:
        return case
    reference = case.reference

    def rounded(state, args, kwargs):
        return reference(*(to(to(v, "cpu", dtype), "cpu", torch.float64) for v in (state, args, kwargs)))

    case.reference = rounded
    return case


def _as_outputs(reply, out_names, dtype):
    """A probe's reply as outputs by name: None unless tensors of `dtype` with values (not on
    the meta device), one per name."""
    if not reply.ok:
        return None
    value = reply.value
    if len(out_names) == 1:
        value = [value]
    if not isinstance(value, (list, tuple)) or len(value) != len(out_names):
        return None
    if not all(isinstance(v, torch.Tensor) and v.dtype == dtype and not v.is_meta for v in value):
        return None
    return dict(zip(out_names, value))


def _differs(cfg, dtype):
    """Whether outputs differ from the reference's beyond `dtype`'s tolerance (their shapes the same)."""
    atol, rtol = cfg.tolerance(dtype)

    def differs(got, expected):
        found = False
        for n, e in expected.items():
            g, e = got[n].detach().double().cpu(), e.detach().double().cpu()
            if g.shape != e.shape:
                return False  # another failure than a wrong value
            found = found or not torch.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
        return found

    return differs


def check_runs(
    sub, cfg, name, args, kwargs, ref_fn, out_names, *, dtype=torch.float64, device="cpu", shape_hints=None, **opts
):
    """The call returns the contract's outputs: their shapes (the reference's),
    the inputs' dtype and device. Values are the values check's business: a
    check of another property starts with this, so that it judges its own
    property even when the values are wrong. On the meta device (no values),
    the same call on the CPU must give plausible outputs first."""
    if str(device) == "meta":
        check_runs(
            sub, cfg, name, args, kwargs, ref_fn, out_names, dtype=dtype, device="cpu", shape_hints=shape_hints, **opts
        )
    got, expected, what = _outputs_of(sub, name, args, kwargs, ref_fn, out_names, dtype, device, opts)
    for n, exp in expected.items():
        check_meta(got[n], f"{what} -> {n}", tuple(exp.shape), dtype, device, hint=(shape_hints or {}).get(n))
    if str(device) != "meta":
        check_plausible(got, expected, what)
    return got, expected


def check_plausible(got, expected, what, hints=None):
    """The outputs are the function's real work, not a placeholder: no NaN or
    inf where the reference has a non-zero number, weights whose rows sum to 1
    wherever the reference's do, and not all zeros where the reference is not.
    A check of another property needs this much (so that returning zeros or
    NaN of the right shape earns none of it); a wrong formula passes it.
    `hints` ({output: hint}, as `check_outputs` takes them): a likely cause that
    reproduces the output (a mask that leaves a row no key)."""
    for n, exp in expected.items():
        g, e = got[n].detach().double().cpu(), exp.detach().double().cpu()
        if g.shape != e.shape:
            continue
        hint = (hints or {}).get(n)

        def cause(n=n, hint=hint):
            return hint(got[n], expected[n]) if hint else None

        bad = ~torch.isfinite(g) & torch.isfinite(e) & (e != 0)
        if bad.any():
            fail(caused(t("not_plausible_nan", what=f"{what} -> {n}", n=int(bad.sum())), cause()))
        if n == "weights" and g.dim() >= 1:
            live = (e.sum(-1) - 1).abs() < 1e-6  # rows the reference gives a distribution
            sums = g.sum(-1)[live]
            if sums.numel() and not torch.allclose(sums, torch.ones_like(sums), atol=0.05):
                worst = float(sums[(sums - 1).abs().argmax()])
                fail(caused(t("not_weights", what=f"{what} -> {n}", sum=number(worst, ".3g")), cause()))
        elif g.numel() and g.abs().max() == 0 and e.abs().max() > 0:
            fail(caused(t("all_zeros", what=f"{what} -> {n}"), cause()))


def close_enough(got, expected, cfg):
    """Whether every output is within grading.yml's tolerance of the reference (no message)."""
    for n, exp in expected.items():
        if got[n].is_meta or exp.is_meta:  # no values (the meta device): close only as two meta tensors of one shape
            if not (got[n].is_meta and exp.is_meta and got[n].shape == exp.shape):
                return False
            continue
        g = got[n].detach().double().cpu()
        e = exp.detach().double().cpu()
        atol, rtol = cfg.tolerance(got[n].dtype)
        if g.shape != e.shape or not torch.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True):
            return False
    return True


def check_in_dtype(
    sub, cfg, name, args, kwargs, ref_fn, out_names, dtype, device, *, hints=None, shape_hints=None, **opts
):
    """The dtype-and-device property: the outputs keep the inputs' dtype and
    device, hold no NaN or inf where the reference does not, and, when the
    function is right in float64, are as close to the reference as `dtype`
    allows (the reference computed in float64 from the same rounded inputs).
    A function already wrong in float64 is the values check's finding, not
    charged again here."""
    got, expected = check_runs(
        sub, cfg, name, args, kwargs, ref_fn, out_names, dtype=dtype, device=device, shape_hints=shape_hints, **opts
    )
    if str(device) == "meta":
        return got
    rounded_args, rounded_kwargs = to(args, "cpu", dtype), to(kwargs or {}, "cpu", dtype)
    expected = reference_outputs(ref_fn, rounded_args, rounded_kwargs, out_names)

    def right_in_float64():
        try:
            return close_enough(*check_runs(sub, cfg, name, args, kwargs, ref_fn, out_names, **opts), cfg)
        except pytest.fail.Exception as exc:
            exc.counterexample = None  # a failure in float64, not in `dtype`: nothing to search for here
            raise

    with counterexample_on_failure(sub, cfg, name, args, kwargs, ref_fn, got, expected, dtype, device, opts):
        judge_in_dtype(
            got,
            expected,
            right_in_float64,
            describe_call(name, to(args, device, dtype), to(kwargs or {}, device, dtype)),
            cfg,
            dtype,
            device,
            hints,
            "cause_constant_overflow_exp",
        )
    return got


def judge_in_dtype(got, expected, right_in_float64, what, cfg, dtype, device, hints, overflow_cause):
    """What the dtype check judges once the outputs came back (shapes, dtype and device
    already checked): no NaN or inf where the reference (`expected`, from the same
    rounded inputs) has numbers; then, off float64 on the CPU, the values, when
    `right_in_float64()` says the function is right there."""
    for n, exp in expected.items():
        bad = ~torch.isfinite(got[n].detach().double().cpu()) & torch.isfinite(exp)
        if bad.any():
            fail(
                caused(
                    t("nonfinite_in_dtype", what=f"{what} -> {n}", n=int(bad.sum()), dtype=wire.dtype_name(dtype)),
                    Msg(overflow_cause),
                )
            )
    if dtype == torch.float64 and str(device) == "cpu":
        return
    if right_in_float64():  # wrong in float64: the values checks' finding, not charged again here
        check_outputs(got, expected, what, cfg, dtype, device, hints)


def check_grads(
    sub, cfg, name, args, kwargs, ref_fn, out_names, seed, *, grad_args=None, hints=None, fresh=None, **opts
):
    """Gradients w.r.t. every floating input (float64) against the reference's. A module's
    values check here shows a counterexample when `fresh` says how to make its cases (its
    `Case.fresh()`: sizes, make, sent; `module_counterexample_on_failure`)."""
    args = to(args, "cpu", torch.float64)
    kwargs = to(kwargs or {}, "cpu", torch.float64)
    grad_args = (
        grad_args
        if grad_args is not None
        else [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()]
    )
    s_args = [
        a.detach().clone().requires_grad_(i in grad_args) if isinstance(a, torch.Tensor) else a
        for i, a in enumerate(args)
    ]
    expected = reference_outputs(ref_fn, args, kwargs, out_names)
    cot = [randn(e.shape, seed + k) for k, e in enumerate(expected.values())]
    reply = call(sub, name, s_args, kwargs, cotangents=cot, **opts)
    what = describe_call(name, args, kwargs)
    got = outputs(reply.value, what, out_names)
    if fresh is not None:
        shows = module_counterexample_on_failure(sub, cfg, name, got, expected, torch.float64, "cpu", *fresh)
    else:
        shows = counterexample_on_failure(
            sub, cfg, name, args, kwargs, ref_fn, got, expected, torch.float64, "cpu", opts
        )
    with shows:
        check_outputs(got, expected, what, cfg, torch.float64, "cpu", hints)
    grads = reply.grads or {}
    if "error" in grads:
        fail(with_cause(grads_error(grads["error"]), error_hint(grads["error"]) or detached(), gradients_of(what)))
    r_args = [
        a.detach().clone().requires_grad_(i in grad_args) if isinstance(a, torch.Tensor) else a
        for i, a in enumerate(args)
    ]
    r_out = ref_fn(*r_args, **kwargs)
    r_out = [r_out] if len(out_names) == 1 else list(r_out)
    leaves = [r_args[i] for i in grad_args]
    r_grads = vjp(r_out, leaves, cot)
    got_grads = grads.get("inputs") or []
    for k, (i, rg) in enumerate(zip(grad_args, r_grads)):
        gg = got_grads[k] if k < len(got_grads) else None
        label = t("gradient_wrt_argument", what=what, i=i + 1)
        if rg is None:
            continue
        if gg is None:
            fail(caused(t("no_gradient_reached", what=label), detached()))
        try:
            assert_close(gg, rg, label, cfg, torch.float64)
        except Failure as exc:
            # the outputs were right (checked above): the forward pass computes the function, its
            # graph does not, which is what a path cut from autograd does (a cause found already stays)
            failure = Failure(
                *((exc.symptom, exc.cause) if exc.cause else (f"{exc.symptom} ", Msg("cause_gradient_path_cut")))
            )
            if fresh is None and isinstance(gg, torch.Tensor) and gg.shape == rg.shape:  # a second look
                failure.counterexample = lambda: _gradient_counterexample(
                    sub, cfg, name, args, kwargs, ref_fn, out_names, grad_args, opts
                )
            raise failure from None
    return reply, r_grads


def _gradient_counterexample(sub, cfg, name, args, kwargs, ref_fn, out_names, grad_args, opts):
    """The feedback lines of a gradient counterexample for a function `name` whose outputs
    are right and whose gradients are not (float64, on the CPU), or None: the smallest
    input found where the gradients of the sum of every output (cotangents of ones, so
    that a student can redo it with `sum().backward()`) w.r.t. the inputs `grad_args`
    differ from the reference's (`shrink.search_function`, the question's budget)."""
    probe = getattr(sub, "probe", None)
    if probe is None or any(opts.get(k) for k in _NOT_A_PLAIN_CALL):
        return None
    limits = shrink.budget(cfg)
    spent = shrink.ledger(sub, name)
    if spent.spent(limits):
        return None
    arg_names = counterexample.parameter_names(ref_fn, len(args))
    grad_names = [arg_names[i] for i in grad_args]

    def leaves(a):
        return [
            x.detach().clone().requires_grad_(i in grad_args) if isinstance(x, torch.Tensor) else x
            for i, x in enumerate(a)
        ]

    def ones_for(a, k):  # the cotangents: ones of the reference's output shapes
        with torch.no_grad():
            out = ref_fn(*a, **k)
        return [torch.ones_like(o) for o in ([out] if len(out_names) == 1 else out)]

    def reference(a, k):
        r = leaves(a)
        out = shrink.refusing(ref_fn, *r, **k)
        outs = [out] if len(out_names) == 1 else list(out)
        grads = vjp(outs, [r[i] for i in grad_args], [torch.ones_like(o) for o in outs])
        return {n: g if g is not None else torch.zeros_like(r[i]) for n, i, g in zip(grad_names, grad_args, grads)}

    def student(a, k, seconds):
        options = CallOptions(**opts, cotangents=ones_for(a, k))
        reply = probe(name, leaves(a), k, options, seconds)
        grads = (reply.grads or {}) if reply.ok else {"error": True}
        got = grads.get("inputs") or []
        if "error" in grads or len(got) != len(grad_args):
            return None
        if not all(isinstance(g, torch.Tensor) and g.dtype == torch.float64 for g in got):
            return None
        return dict(zip(grad_names, got))

    found = shrink.search_function(
        name, list(args), dict(kwargs or {}), student, reference, _differs(cfg, torch.float64), limits, spent
    )
    if found is None:
        return None
    return counterexample.render(name, arg_names, found, limits, kind="gradient")


def check_finite_grads(sub, name, args, kwargs, out_names, seed, **opts):
    """Gradients w.r.t. every floating input exist and hold no NaN or inf (the
    fully-masked property: a guarded softmax keeps them finite). Their values
    are the gradients check's business."""
    args = to(args, "cpu", torch.float64)
    s_args = [
        a.detach().clone().requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a for a in args
    ]
    shapes = None
    reply = call(sub, name, s_args, kwargs, **opts)
    shapes = [tuple(o.shape) for o in outputs(reply.value, describe_call(name, args, kwargs), out_names).values()]
    cot = [randn(sh, seed + k) for k, sh in enumerate(shapes)]
    reply = call(sub, name, s_args, kwargs, cotangents=cot, **opts)
    what = describe_call(name, args, kwargs)
    grads = reply.grads or {}
    if "error" in grads:
        fail(with_cause(grads_error(grads["error"]), error_hint(grads["error"]) or detached(), gradients_of(what)))
    for i, g in enumerate(grads.get("inputs") or []):
        if isinstance(g, torch.Tensor) and not torch.isfinite(g.double()).all():
            fail(
                caused(
                    t("grad_nonfinite_dead_row", what=t("gradient_wrt_argument", what=what, i=i + 1)),
                    Msg("cause_grad_unguarded"),
                )
            )
    return reply


def _same_tensor(sent, back):
    """Whether `back` (rebuilt from the worker's bytes) is `sent`, bit for bit
    (meta tensors: shape and dtype only). Decided here, in the judge."""
    if not isinstance(back, torch.Tensor) or back.dtype != sent.dtype or tuple(back.shape) != tuple(sent.shape):
        return False
    if sent.device.type == "meta" or back.device.type == "meta":
        return True
    return wire.tensor_bytes(back) == wire.tensor_bytes(sent)


def check_inputs_unchanged(sub, name, args, kwargs=None, **opts):
    reply = call(sub, name, args, kwargs, return_inputs=True, **opts)
    flat = wire.flat_tensors([list(args), list((kwargs or {}).values())])
    after = reply.inputs_after
    if not isinstance(after, list) or len(after) != len(flat):
        fail(t("inputs_not_sent_back", what=describe_call(name, args, kwargs), n=len(flat)))
    for i, (sent, back) in enumerate(zip(flat, after)):
        if not _same_tensor(sent, back):
            fail(
                caused(
                    t(
                        "input_changed",
                        what=describe_call(name, args, kwargs),
                        i=i + 1,
                        shape=tuple(flat[i].shape) if i < len(flat) else "?",
                    ),
                    in_place(),
                )
            )
    return reply


def growth(what_grows):
    """(what grew, what a Python loop runs over) in the language in force, for
    one of the sizes a vectorised check grows (GROWS)."""
    return {
        "batch": (t("grows_batch"), t("loop_over_batch")),
        "sequence_length": (t("grows_sequence_length"), t("loop_over_sequence_length")),
        "query_length": (t("grows_query_length"), t("loop_over_query_length")),
        "rows": (t("grows_rows"), t("loop_over_rows")),
        "heads": (t("grows_heads"), t("loop_over_heads")),
    }[what_grows]


GROWS = ("batch", "sequence_length", "query_length", "rows", "heads")


def ops_grew(name, counts, what_grows, cause_key="cause_python_loop"):
    """Fail: the count of torch operations grew with `what_grows` (one of GROWS)."""
    grew, over = growth(what_grows)
    fail(caused(t("ops_grew", name=name, small=counts[0], large=counts[1], grew=grew), Msg(cause_key, over=over)))


def ops_grow(name, count, sizes, what_grows, cause_key="cause_python_loop"):
    """Fail where the count of torch operations grows with `what_grows` (one of GROWS):
    `count(size)` the count of one call at each of `sizes` (three or more, increasing;
    None: no count came back). A Python loop over the size adds operations at every
    step; a branch on it (one extra operation past a size, as when T_q > T_k) adds them
    once: only a count that grows at every step is a loop."""
    if len(sizes) < 3 or list(sizes) != sorted(set(sizes)):
        raise ValueError(sizes)  # the kit's own misuse: three or more increasing sizes
    counts = [count(size) for size in sizes]
    if any(n is None for n in counts):
        fail(t("no_op_count", name=name))
    if all(b > a for a, b in zip(counts, counts[1:])):
        ops_grew(name, (counts[0], counts[-1]), what_grows, cause_key)


def check_vectorised(sub, name, make, sizes, what_grows, **opts):
    """The number of torch calls must not grow with batch size, length or heads:
    `make(size)` the (args, kwargs) of a call at each of `sizes` of `what_grows` (one of
    GROWS: "batch", "heads", ...), everything else the same (`ops_grow`)."""
    no_tracing_tampering(sub, name)
    ops_grow(name, lambda size: call(sub, name, *make(size), trace=True, **opts).op_count, sizes, what_grows)


def no_tracing_tampering(sub, name):
    """The operation counter runs in the student's process: code that reaches
    for torch's tracing internals (or the kit's own modules) could switch it
    off, so it fails the checks that rely on it (judged on the source, by the
    notebook reader: `sub.submission.findings`)."""
    findings = getattr(sub.submission, "findings", None)
    if not isinstance(findings, dict):
        fail(t("source_checks_missing", name=name))
    found = findings.get("tracing") or []
    if found:
        fail(
            caused(
                t("tracing_tampered", name=name, finding=finding_text(found[0], sub.submission.cells)),
                Msg("cause_tracing"),
            )
        )


def check_from_scratch(sub, cells, provided, name, args, kwargs=None, **opts):
    """No torch built-in attention in the student's code: judged on the source
    (parsed by the notebook reader: `sub.submission.findings`; a provided
    function of a built-in's name excuses that name) and on the calls traced
    while it ran."""
    no_tracing_tampering(sub, name)
    reply = call(sub, name, args, kwargs, trace=True, **opts)
    findings = sub.submission.findings  # a dict: no_tracing_tampering checked it
    excused = findings.get("excused") or {}
    found = sorted(
        f
        for f in list((findings.get("forbidden") or {}).get(name) or []) + list(findings.get("unchecked") or [])
        if excused.get(f) not in provided
    )
    if found:
        fail(
            caused(
                t("builtin_in_source", name=name, finding=finding_text(found[0], sub.submission.cells)),
                Msg("cause_builtin_source"),
            )
        )
    if reply.forbidden_seen:
        fail(caused(t("builtin_called", name=name, builtin=reply.forbidden_seen[0]), Msg("cause_builtin_traced")))
    return reply


def expect_value_error(sub, name, args, kwargs=None, why="", **opts):
    """The call raises ValueError; `why` (rendered from the catalog) says why it must."""
    reply = sub.call(name, args, kwargs, CallOptions(**opts))
    what = describe_call(name, args, kwargs)
    if reply.ok:
        fail(caused(t("returned_no_value_error", what=what, why=why), Msg("cause_sizes_unchecked")))
    if raised(reply, "AssertionError"):
        fail(
            caused(
                t("raised_not_value_error", what=what, error=reply.error.rstrip(), why=why), Msg("cause_assert_sizes")
            )
        )
    if not raised(reply, "ValueError"):
        fail(
            caused(
                t("raised_not_value_error", what=what, error=reply.error.rstrip(), why=why),
                Msg("cause_sizes_checked_late"),
            )
        )
