"""Hidden tests: MultiHeadAttention(embed_dim, n_heads, bias=True) and its forward
(query, key, value, mask=None) -> (output (B, T_q, D), weights (B, h, T_q, T_k)).

The worker builds the student's module, moves it to the device and dtype, and
copies the parameters below into q_proj, k_proj, v_proj, out_proj before each
call. The yardsticks: the reference module with the same parameters, and
torch.nn.MultiheadAttention with them copied in.
"""

import math

import pytest
import torch
from torch import nn

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.solutions import multi_head as ref
from autograder.private.solutions.classic_attention import masked_softmax
from autograder.private.suites import (
    calls,
    causes,
    compare,
    counterexamples,
    dtypes,
    failing,
    grads,
    modules,
    properties,
    tensors,
    value_checks,
)
from autograder.protocol.grads import vjp

QUESTION = "multi_head_attention"
NAME = "MultiHeadAttention"
OUT = ("output", "weights")
PROJ = ("q_proj", "k_proj", "v_proj", "out_proj")
# (B, T_q, T_k, D, n_heads): all distinct, cross-attention; B == T, self-attention; T_q > T_k; one head; B == 1.
SIZES = [(3, 4, 6, 10, 2), (5, 5, 5, 15, 3), (2, 7, 3, 24, 4), (2, 4, 4, 6, 1), (1, 3, 5, 8, 4)]


# -- inputs -------------------------------------------------------------------------
def state(D, bias, seed, w_scale=1.5, b_scale=0.5):
    out = {}
    for i, p in enumerate(PROJ):
        out[f"{p}.weight"] = tensors.randn((D, D), seed + i, scale=w_scale / math.sqrt(D))
        if bias:
            out[f"{p}.bias"] = tensors.randn((D,), seed + 10 + i, scale=b_scale)
    return out


def make_mask(kind, B, T_q, T_k, lengths=None):
    """None, "causal" (T_q, T_k), "padding" (B, 1, 1, T_k), "both" (B, 1, T_q, T_k)."""
    if kind is None:
        return None
    causal = torch.ones(T_q, T_k, dtype=torch.bool).tril()
    if lengths is None:
        lengths = [T_k - (b % T_k) for b in range(B)]  # first unpadded, the rest padded
    pad = tensors.lengths_mask(lengths, T_k)[:, None, None, :]  # (B, 1, 1, T_k)
    return {"causal": causal, "padding": pad, "both": pad & causal}[kind]


class Case(modules.Case):
    """One call (`modules.Case`): sizes, bias, parameters, inputs and mask."""

    SOLUTIONS = ref
    NAME = NAME
    OUT = OUT
    ARG_NAMES = ("query", "key", "value")

    def __init__(
        self,
        B,
        T_q,
        T_k,
        D,
        h,
        seed,
        bias=True,
        mask=None,
        lengths=None,
        self_attention=False,
        w_scale=1.5,
        b_scale=0.5,
    ):
        self.B, self.T_q, self.T_k, self.D, self.h, self.bias = B, T_q, T_k, D, h, bias
        self.kind = mask if isinstance(mask, str) or mask is None else "given"  # how the mask was made
        self.self_attention = self_attention
        self.state = state(D, bias, seed, w_scale, b_scale)
        q = tensors.randn((B, T_q, D), seed + 20)
        if self_attention:
            self.args = [q, q.clone(), q.clone()]
        else:
            self.args = [q, tensors.randn((B, T_k, D), seed + 21), tensors.randn((B, T_k, D), seed + 22)]
        self.mask = make_mask(mask, B, T_q, T_k, lengths) if isinstance(mask, str) or mask is None else mask
        self.kwargs = {} if self.mask is None else {"mask": self.mask}

    def ctor(self):
        return [self.D, self.h]

    def ctor_kwargs(self):
        return {"bias": self.bias}

    def ref_fn(self, dtype=torch.float64):
        m = self.reference(dtype)
        return lambda q, k, v, mask=None: m(q, k, v, mask)

    def named_sizes(self):
        sizes = {"B": self.B, "T_q": self.T_q, "D": self.D, "n_heads": self.h}
        if not self.self_attention:
            sizes["T_k"] = self.T_k
        return sizes

    def at(self, sizes, seed):
        """A case like this one (bias, mask kind, self-attention) at other sizes, with
        parameters and inputs drawn from another seed."""
        if self.kind == "given" or sizes["D"] % sizes["n_heads"]:
            return None
        T_k = sizes["T_q"] if self.self_attention else sizes["T_k"]
        return Case(
            sizes["B"],
            sizes["T_q"],
            T_k,
            sizes["D"],
            sizes["n_heads"],
            seed,
            self.bias,
            self.kind,
            None,
            self.self_attention,
        )


# -- likely causes ------------------------------------------------------------------


def _manual(case, scale=None, split="ok", merge="ok", out_proj=True, mask="ok", swap_kv=False, v_proj="v_proj"):
    """Multi-head attention written out here, with one mistake at a time."""
    st, h = case.state, case.h
    q, k, v = (a.double() for a in case.args)
    B, T_q, D = q.shape
    T_k = k.shape[1]
    d = D // h

    def lin(x, p):
        y = x @ st[f"{p}.weight"].T
        return y + st[f"{p}.bias"] if f"{p}.bias" in st else y

    def sp(x, T):
        if split == "view":
            return x.reshape(B, h, T, d)
        if split == "interleaved":
            return x.reshape(B, T, d, h).permute(0, 3, 1, 2)
        return x.reshape(B, T, h, d).transpose(1, 2)

    Q, K, V = sp(lin(q, "q_proj"), T_q), sp(lin(k, "k_proj"), T_k), sp(lin(v, v_proj), T_k)
    if swap_kv:
        K, V = sp(lin(k, "v_proj"), T_k), sp(lin(v, "k_proj"), T_k)
    m = case.mask
    if m is not None and mask == "inverted":
        m = ~m
    elif mask == "ignored":
        m = None
    elif mask == "causal":  # a causal mask whatever the caller passed
        m = torch.ones(T_q, T_k, dtype=torch.bool).tril()
    scores = Q @ K.transpose(-2, -1) * (scale if scale is not None else d**-0.5)
    w = masked_softmax(scores, m, dim=-1)
    heads = w @ V  # (B, h, T_q, d)
    if merge == "no_transpose":
        merged = heads.reshape(B, T_q, D)
    elif merge == "interleaved":
        merged = heads.permute(0, 2, 3, 1).reshape(B, T_q, D)
    else:
        merged = heads.transpose(1, 2).reshape(B, T_q, D)
    return (lin(merged, "out_proj") if out_proj else merged), w


def _alternatives(case):
    D, h = case.D, case.h
    d = D // h
    alts = []
    if h > 1:
        alts += [
            (Msg("cause_mha_scaled_by_embed_dim"), _manual(case, scale=D**-0.5)),
            (Msg("cause_mha_scaled_by_d_head"), _manual(case, scale=1 / d)),
        ]
    alts += [
        (Msg("cause_mha_not_scaled"), _manual(case, scale=1.0)),
        (Msg("cause_mha_no_out_proj"), _manual(case, out_proj=False)),
        (Msg("cause_mha_kv_swapped"), _manual(case, swap_kv=True)),
        (Msg("cause_mha_values_by_k_proj"), _manual(case, v_proj="k_proj")),
        (Msg("cause_mha_values_by_q_proj"), _manual(case, v_proj="q_proj")),
    ]
    if h > 1:
        alts += [
            (Msg("cause_mha_split_view"), _manual(case, split="view")),
            (Msg("cause_mha_split_interleaved"), _manual(case, split="interleaved")),
            (Msg("cause_mha_merge_no_transpose"), _manual(case, merge="no_transpose")),
            (Msg("cause_mha_merge_interleaved"), _manual(case, merge="interleaved")),
        ]
    if case.T_q == case.T_k and (
        case.mask is None
        or not torch.equal(
            case.mask.expand(case.B, 1, case.T_q, case.T_k),
            torch.ones(case.T_q, case.T_k, dtype=torch.bool).tril().expand(case.B, 1, case.T_q, case.T_k),
        )
    ):
        alts.append((Msg("cause_mha_always_causal"), _manual(case, mask="causal")))
    if case.mask is not None:
        alts += [
            (Msg("cause_polarity_may_attend"), _manual(case, mask="inverted")),
            (causes.mask_ignored(), _manual(case, mask="ignored")),
        ]
    return alts


def hints(case, cfg):
    cache = []

    def alts():
        if not cache:
            cache.extend(_alternatives(case))
        return cache

    def output(g, e):
        for cause, (o, _) in alts():
            if compare.matches(g, o, cfg):
                return cause
        if torch.isnan(g).any():
            if case.mask is not None and (~case.mask).all(-1).any():
                return Msg("cause_nan_dead_row_guard")
            return Msg("cause_nan_overflow_short")
        return None

    def weights(g, e):
        for cause, (_, w) in alts():
            if compare.matches(g, w, cfg):
                return cause
        return _dropout_cause(g, e, cfg) or causes.weights_hint(g, e, case.mask)

    return {"output": output, "weights": weights}


def _dropout_cause(got, expected, cfg):
    """Weights that went through dropout (an nn.Dropout left in, the module called in training
    mode): recomputed from the reference's, some set to exactly 0 and every other one the
    reference's times one factor 1/(1 - p)."""
    g, e = got.detach().double().cpu(), expected.detach().double().cpu()
    if g.shape != e.shape or torch.isnan(g).any():
        return None
    dropped, kept = (g == 0) & (e != 0), (g != 0) & (e != 0)
    if not dropped.any() or not kept.any() or bool((g[e == 0] != 0).any()):
        return None
    scale = float((g[kept] / e[kept]).mean())
    if scale <= 1 or not compare.matches(g, torch.where(dropped, 0.0, e * scale), cfg):
        return None
    return Msg("cause_mha_dropout_on_weights", p=number(1 - 1 / scale, ".2g"))


# -- calling ------------------------------------------------------------------------
def call(sub, case, args=None, kwargs=None, dtype=torch.float64, device="cpu", **opts):
    """Call the student's module; on an error, a likely cause when a simpler call works."""
    args = args if args is not None else case.args
    kwargs = kwargs if kwargs is not None else case.kwargs
    reply = sub.call(NAME, args, kwargs, CallOptions(**case.opts(dtype, device), **opts))
    if reply.ok:
        return reply
    what = case.describe(args, kwargs, device)
    if device == "cpu" and not causes.error_hint(reply.error):  # a known error names its own cause (see _join)

        def explain():
            cause = _simpler_call_works(sub, case, args, kwargs, dtype, device)
            return _join(what, reply.error, cause) if cause else None

        failing.fail_explained(_join(what, reply.error, None), explain)
    cause = Msg("cause_mha_meta_device") if device == "meta" and "device" in reply.error else None
    failing.fail(_join(what, reply.error, cause))


def _simpler_call_works(sub, case, args, kwargs, dtype, device):
    """The likely cause of an error when a simpler call works (a second look: `sub.probe`)."""
    options = CallOptions(**case.opts(dtype, device))
    if kwargs.get("mask") is not None and sub.probe(NAME, args, options=options).ok:
        return Msg("cause_mha_mask_as_is", shape=tuple(kwargs["mask"].shape))
    if case.T_q != case.T_k:
        q, k, v = args
        same = [q, _fit(k, case.T_q), _fit(v, case.T_q)]
        if sub.probe(NAME, same, options=options).ok:
            return Msg("cause_mha_cross_attention", T_q=case.T_q, T_k=case.T_k)
    return None


def _headless_cause(case, w, args, kwargs, device, cfg):
    """Weights (B, T_q, T_k) without their head axis: averaged over the heads where the
    reference's mean over its heads reproduces them (nn.MultiheadAttention's default), else
    the shape alone says the heads were combined."""
    if str(device) != "meta":
        per_head = calls.reference_outputs(case.ref_fn(), args, kwargs, OUT)["weights"]
        if compare.matches(w, per_head.mean(1), cfg):
            return Msg("cause_mha_weights_averaged")
    return Msg("cause_mha_weights_merged")


def _join(what, error, cause):
    """The worker's error line after `what`, with a likely cause (a `Said`), punctuated."""
    error = error.rstrip()
    cause = cause or causes.error_hint(error)
    if not cause:
        return f"{what} {error}"
    return failing.caused(f"{what} {error}" if error.endswith(":") else f"{what} {error.rstrip('.!')}.", cause)


def _fit(x, T):
    """x (B, T_k, D) cut or repeated to length T."""
    return x.repeat(1, math.ceil(T / x.shape[1]), 1)[:, :T]


def runs(sub, cfg, case, dtype=torch.float64, device="cpu", args=None, kwargs=None, plausible=True):
    """The module returns the contract's outputs: shapes, the inputs' dtype and
    device (values: the values checks), plausible ones (`value_checks.check_plausible`; on
    the meta device, the same call on the CPU first). Returns (got, what)."""
    if device == "meta":
        runs(sub, cfg, case, dtype, "cpu", args, kwargs)
    sent_args, sent_kwargs = case.args if args is None else args, case.kwargs if kwargs is None else kwargs
    args = tensors.to(sent_args, device, dtype)
    kwargs = tensors.to(sent_kwargs, device, dtype)
    if device == "meta":
        args, kwargs = tensors.as_meta(args), tensors.as_meta(kwargs)
    reply = call(sub, case, args, kwargs, dtype=dtype, device=device)
    what = case.describe(args, kwargs, device)
    extra = sorted(n for n in (reply.params or {}) if n.endswith(".bias") and n.split(".")[0] in PROJ)
    if not case.bias and extra:
        failing.fail(
            failing.caused(
                t("mha_has_the_bias", module=f"MultiHeadAttention({case.D}, {case.h}, bias=False)", name=extra[0]),
                Msg("cause_bias_not_passed"),
            )
        )
    got = calls.outputs(reply.value, what, OUT)
    w = got["weights"]
    want_w = (case.B, case.h, case.T_q, case.T_k)
    if tuple(w.shape) == (case.B, case.T_q, case.T_k) and case.h > 1:
        failing.fail(
            failing.caused(
                t("shape_differs", what=f"{what} -> weights", got=tuple(w.shape), expected=want_w),
                _headless_cause(case, w, sent_args, sent_kwargs, device, cfg),
                ". ",
            )
        )
    for name, shape in (("output", (case.B, case.T_q, case.D)), ("weights", want_w)):
        value_checks.check_meta(got[name], f"{what} -> {name}", shape, dtype, device)
    if device != "meta" and plausible:
        sent = case.kwargs if kwargs is None or "mask" not in kwargs else {"mask": case.mask}
        expected = calls.reference_outputs(case.ref_fn(dtype), tensors.to(case.args, "cpu", dtype), sent, OUT)
        value_checks.check_plausible(got, expected, what, hints={"weights": lambda g, e: _dropout_cause(g, e, cfg)})
    return got, what


def expected_outputs(case, dtype=torch.float64):
    """The exact result for what the student's module received: inputs and parameters rounded to `dtype`."""
    return calls.reference_outputs(case.ref_fn(dtype), tensors.to(case.args, "cpu", dtype), case.kwargs, OUT)


def values(sub, cfg, case, dtype=torch.float64, device="cpu"):
    """The student's outputs against the reference module's."""
    got, what = runs(sub, cfg, case, dtype, device)
    expected = expected_outputs(case, dtype)
    with counterexamples.module_counterexample_on_failure(sub, cfg, NAME, got, expected, dtype, device, *case.fresh()):
        value_checks.check_outputs(
            got, expected, what, cfg, dtype, device, hints(case, cfg) if device != "meta" else None
        )
    return got, expected


# -- families -----------------------------------------------------------------------
def test_parameters(sub, cfg):
    """q_proj, k_proj, v_proj, out_proj: weights (D, D), biases (D,) exactly when bias=True; no
    persistent buffer in the state_dict."""
    for bias in (True, False):
        case = Case(*SIZES[1], seed=110, bias=bias)
        reply = sub.call(NAME, options=CallOptions(construct=case.construct(), to={"dtype": "float64"}, invoke=False))
        what = f"MultiHeadAttention({case.D}, {case.h}, bias={bias})"
        if not reply.ok:
            calls.call_failed(what, reply.error, hint=False)
        params = reply.params or {}
        D = case.D
        for p in PROJ:
            for kind, shape in (("weight", [D, D]), ("bias", [D])):
                name = f"{p}.{kind}"
                if kind == "bias" and not bias:
                    if name in params:
                        failing.fail(
                            failing.caused(t("mha_has_a_bias", module=what, name=name), Msg("cause_bias_not_passed"))
                        )
                    continue
                if name not in params:
                    failing.fail(
                        t(
                            "mha_missing_parameter",
                            module=what,
                            name=name,
                            params=sorted(params),
                            expected=", ".join(PROJ),
                        )
                    )
                if params[name]["shape"] != shape:
                    failing.fail(
                        t(
                            "mha_parameter_shape",
                            module=what,
                            name=name,
                            got=tuple(params[name]["shape"]),
                            expected=tuple(shape),
                        )
                    )
                if params[name]["dtype"] != "float64":
                    failing.fail(t("mha_parameter_not_moved", module=what, name=name, dtype=params[name]["dtype"]))
        modules.check_no_persistent_buffer(reply, params, what)


def test_shapes_and_values(sub, cfg):
    """Several sizes, cross-attention, bias on and off, every mask shape."""
    cases = [
        Case(*SIZES[1], seed=200, self_attention=True),
        Case(*SIZES[1], seed=205, mask="causal", self_attention=True),
        Case(*SIZES[0], seed=210),
        Case(*SIZES[0], seed=215, mask="padding"),
        Case(*SIZES[2], seed=220, bias=False, mask="padding"),
        Case(*SIZES[3], seed=225, mask="both"),
        Case(*SIZES[4], seed=230, mask="both"),
    ]
    for case in cases:
        got, _ = values(sub, cfg, case)
        sums = got["weights"].double().sum(-1)
        value_checks.assert_close(sums, torch.ones_like(sums), t("weights_summed_keys", what=case.describe()), cfg)


def test_matches_torch(sub, cfg):
    """Against torch.nn.MultiheadAttention with the same parameters (its masks mean
    True = ignore), on every query with at least one allowed key."""
    for case in (
        Case(*SIZES[0], seed=300, mask="padding"),
        Case(*SIZES[2], seed=305, bias=False, mask="causal"),
        Case(*SIZES[1], seed=310, mask="both", self_attention=True),
        Case(*SIZES[4], seed=315, mask="padding", lengths=[3]),
    ):
        got, _ = values(sub, cfg, case)
        _against_torch(got, case, cfg)
    # a batch item with no allowed key (torch gives NaN there): compared on the other queries only
    case = Case(*SIZES[0], seed=320, mask="both", lengths=[6, 0, 2])
    got = calls.outputs(call(sub, case).value, case.describe(), OUT)
    _against_torch(got, case, cfg)


def _against_torch(got, case, cfg):
    t_out, t_w = _torch_mha(case)
    ref_out = calls.reference_outputs(case.ref_fn(), case.args, case.kwargs, OUT)["output"]
    keep = case.mask.expand(case.B, case.h, case.T_q, case.T_k).any(-1, keepdim=True)  # (B, h, T_q, 1)
    rows = keep[:, 0]  # (B, T_q, 1): the masks here are the same in every head
    what = t("against_torch_mha", what=case.describe())
    h = hints(case, cfg)
    for name, want, where, e in (("weights", t_w, keep, t_w), ("output", t_out, rows, ref_out)):
        g = got[name]
        value_checks.check_meta(g, f"{what} -> {name}", tuple(want.shape), torch.float64, "cpu")
        value_checks.assert_close(
            torch.where(where, g.double(), 0.0),
            torch.where(where, want, 0.0),
            t("on_allowed_queries", what=what, name=name),
            cfg,
            hint=lambda _g, _e, g=g, e=e, n=name: h[n](g, e),
        )


def _torch_mha(case):
    D, h = case.D, case.h
    m = nn.MultiheadAttention(D, h, bias=case.bias, batch_first=True).double()
    st = case.state
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([st["q_proj.weight"], st["k_proj.weight"], st["v_proj.weight"]]))
        m.out_proj.weight.copy_(st["out_proj.weight"])
        if case.bias:
            m.in_proj_bias.copy_(torch.cat([st["q_proj.bias"], st["k_proj.bias"], st["v_proj.bias"]]))
            m.out_proj.bias.copy_(st["out_proj.bias"])
    mask = case.mask
    kw = {}
    if mask is not None and tuple(mask.shape) == (case.B, 1, 1, case.T_k):
        kw["key_padding_mask"] = ~mask[:, 0, 0, :]  # (B, T_k), True = ignore
    elif mask is not None:
        full = mask.expand(case.B, h, case.T_q, case.T_k)
        kw["attn_mask"] = ~full.reshape(case.B * h, case.T_q, case.T_k)  # True = not allowed
    m.eval()
    with torch.no_grad():
        out, w = m(*case.args, need_weights=True, average_attn_weights=False, **kw)
    return out, w


def test_causal_structure(sub, cfg):
    """Causal mask: weights above the diagonal exactly 0 in every head, and the output
    at position t does not change when keys/values after t change."""
    case = Case(*SIZES[1], seed=400, mask="causal", self_attention=True)
    got, _ = runs(sub, cfg, case)
    leak = got["weights"][~case.mask.expand(got["weights"].shape)]
    if leak.abs().max() != 0:
        failing.fail(
            t(
                "above_diagonal_nonzero",
                what=case.describe(),
                n=int((leak != 0).sum()),
                max=number(float(leak.abs().max()), ".3g"),
            )
        )
    for s in (1, 3):
        q, k, v = (a.clone() for a in case.args)
        k[:, s:] += tensors.randn(k[:, s:].shape, 401 + s, scale=5.0)
        v[:, s:] += tensors.randn(v[:, s:].shape, 402 + s, scale=5.0)
        again = calls.outputs(call(sub, case, [q, k, v]).value, case.describe(), OUT)
        value_checks.assert_close(
            again["output"][:, :s],
            got["output"][:, :s],
            t("output_after_future_change", what=case.describe(), s=s),
            cfg,
        )


def test_padding_structure(sub, cfg):
    """Padding mask (B, 1, 1, T_k): padded keys get weight exactly 0 in every head, and
    changing padded keys/values changes nothing."""
    lengths = [6, 3, 1]
    case = Case(*SIZES[0], seed=450, mask="padding", lengths=lengths)
    got, _ = runs(sub, cfg, case)
    pad = tensors.lengths_mask(lengths, case.T_k)
    leak = got["weights"][~case.mask.expand(got["weights"].shape)]
    if leak.abs().max() != 0:
        failing.fail(t("padded_keys_nonzero_heads", what=case.describe(), max=number(float(leak.abs().max()), ".3g")))
    q, k, v = (a.clone() for a in case.args)
    k[~pad] += tensors.randn(k[~pad].shape, 451, scale=5.0)
    v[~pad] += tensors.randn(v[~pad].shape, 452, scale=5.0)
    again = calls.outputs(call(sub, case, [q, k, v]).value, case.describe(), OUT)
    value_checks.assert_close(
        again["output"],
        got["output"],
        t("output_after_padded_change", what=case.describe()),
        cfg,
    )


def test_fully_masked_rows(sub, cfg):
    """A query with no allowed key: zero weights in every head, no NaN; its output is
    out_proj applied to zeros (the bias)."""
    for k, case in enumerate(
        (
            Case(*SIZES[0], seed=500, mask="padding", lengths=[6, 0, 2]),
            Case(*SIZES[2], seed=510, bias=False, mask="both", lengths=[0, 2]),
        )
    ):
        # (NaN on a fully masked row is this check's own finding: check_dead_rows says why)
        got, _ = runs(sub, cfg, case, kwargs={"mask": _accepted_mask(sub, case)}, plausible=False)
        dead = ~case.mask.expand(case.B, case.h, case.T_q, case.T_k).any(-1)  # (B, h, T_q)
        unmasked = calls.reference_outputs(case.ref_fn(), case.args, {}, OUT)["weights"]
        masked = calls.reference_outputs(case.ref_fn(), case.args, {"mask": case.mask}, OUT)["weights"]
        value_checks.check_dead_rows(
            t("in_every_head", what=case.describe()),
            got["weights"],
            dead,
            unmasked,
            others=[(got["output"], torch.zeros(got["output"].shape, dtype=torch.bool))],
            masked=masked,
            cfg=cfg,
        )


def _accepted_mask(sub, case):
    """The case's mask in the first of its equivalent shapes the module accepts
    (as given, (B, 1, T_q, T_k), (B, n_heads, T_q, T_k)), so that a module that
    mishandles one mask shape (the values checks' finding) still has its
    fully masked rows judged."""
    B, h, T_q, T_k = case.B, case.h, case.T_q, case.T_k
    shapes = [case.mask, case.mask.expand(B, 1, T_q, T_k).clone(), case.mask.expand(B, h, T_q, T_k).clone()]
    for m in shapes:
        if sub.call(NAME, case.args, {"mask": m}, CallOptions(**case.opts())).ok:
            return m
    return case.mask


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. query, key, value and every parameter."""
    for k, case in enumerate(
        (Case(*SIZES[0], seed=600, mask="padding"), Case(*SIZES[2], seed=610, bias=False, mask="both"))
    ):
        seed = 620 + 10 * k
        opts = case.opts()
        opts.pop("device")
        reply, _ = grads.check_grads(
            sub,
            cfg,
            NAME,
            case.args,
            case.kwargs,
            case.ref_fn(),
            OUT,
            seed,
            hints=hints(case, cfg),
            fresh=case.fresh(),
            **opts,
        )
        # the reference's parameter gradients, with the same cotangents
        m = case.reference()
        out = m(*case.args, **case.kwargs)
        cot = [tensors.randn(o.shape, seed + i) for i, o in enumerate(out)]
        names = list(case.state)
        r_grads = vjp(list(out), [dict(m.named_parameters())[n] for n in names], cot, allow_unused=False)
        got = (reply.grads or {}).get("params") or {}
        for name, rg in zip(names, r_grads):
            g = got.get(name)
            label = t("gradient_wrt_parameter", what=case.describe(), name=name)
            if g is None:
                failing.fail(
                    failing.caused(
                        t("no_gradient_reached_parameter", what=label),
                        Msg("cause_parameter_unused", proj=name.split(".")[0]),
                    )
                )
            value_checks.assert_close(g, rg, label, cfg, torch.float64)


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    # moderate weights: float16/bfloat16 rounding stays within grading.yml's tolerances
    case = Case(*SIZES[0], seed=700, mask="padding", w_scale=0.7, b_scale=0.2)
    got, what = runs(sub, cfg, case, dtype, device)
    if device == "meta":
        return
    dtypes.judge_in_dtype(
        got,
        expected_outputs(case, dtype),
        lambda: compare.close_enough(runs(sub, cfg, case)[0], expected_outputs(case), cfg),
        what,
        cfg,
        dtype,
        device,
        hints(case, cfg),
        "cause_constant_overflow",
    )


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows tensors built on the CPU."""
    runs(sub, cfg, Case(*SIZES[0], seed=750, mask="both"), dtype=torch.float32, device="meta")
    runs(sub, cfg, Case(*SIZES[0], seed=760), dtype=torch.float32, device="meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    case = Case(*SIZES[0], seed=800, mask="padding")
    opts = case.opts()
    opts.pop("device")
    runs(sub, cfg, case)  # its real outputs (the property is about them)
    properties.check_inputs_unchanged(sub, NAME, case.args, case.kwargs, **opts)


def test_value_error_when_not_divisible(sub, cfg):
    valid = Case(*SIZES[1], seed=850)
    reply = sub.call(NAME, options=CallOptions(construct=valid.construct(), invoke=False))
    if not reply.ok:  # a module that always raises does not keep the error contract
        failing.fail(
            t("mha_must_construct", what=f"MultiHeadAttention({valid.D}, {valid.h})", error=reply.error.rstrip())
        )
    for D, h in ((10, 3), (6, 4)):
        reply = sub.call(NAME, options=CallOptions(construct={"args": [D, h], "kwargs": {}}, invoke=False))
        what = f"MultiHeadAttention({D}, {h})"
        if reply.ok:
            failing.fail(failing.caused(t("mha_constructed", what=what, D=D, h=h), Msg("cause_init_unchecked")))
        if not calls.raised(reply, "ValueError"):
            failing.fail(
                failing.caused(
                    t("mha_raised_other", what=what, error=reply.error.rstrip(), D=D, h=h),
                    Msg("cause_init_checked_late"),
                )
            )


@pytest.mark.property
def test_from_scratch(sub, cfg, cells, provided):
    case = Case(*SIZES[0], seed=900, mask="padding")
    runs(sub, cfg, case)
    opts = case.opts()
    opts.pop("device")
    properties.check_from_scratch(sub, cells, provided, NAME, case.args, case.kwargs, **opts)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The number of torch operations must not grow with the batch or the heads
    (a loop over the three projections is fine: it does not grow)."""
    properties.no_tracing_tampering(sub, NAME)
    runs(sub, cfg, Case(*SIZES[0], seed=950, mask="padding"))
    d = 3
    for grow, make, sizes in (
        ("batch", lambda b: Case(b, 3, 4, 4 * d, 4, seed=960, mask="padding"), (2, 4, 6)),
        ("heads", lambda h: Case(2, 3, 4, h * d, h, seed=960, mask="padding"), (2, 4, 6)),
    ):
        count = lambda size, make=make: call(sub, make(size), trace=True).op_count  # noqa: E731
        properties.ops_grow(NAME, count, sizes, grow, cause_key="cause_python_loop_short")
