"""Hidden tests: scaled_dot_product_attention(query, key, value, mask=None).

Sizes are chosen so that silent broadcasting shows: T_q != T_k, d_v != d_k,
all distinct, also B == T; 2-D, 3-D and 4-D inputs. The yardsticks are the
reference and torch.nn.functional.scaled_dot_product_attention.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.solutions import scaled_dot_product as ref
from autograder.private.solutions.classic_attention import masked_softmax
from autograder.private.suites import calls, causes, compare, dtypes, failing, grads, properties, tensors, value_checks

QUESTION = "scaled_dot_product_attention"
NAME = "scaled_dot_product_attention"
OUT = ("output", "weights")
# (leading axes, T_q, T_k, d_k, d_v)
SIZES = [
    ((), 3, 5, 4, 6),  # 2-D
    ((2,), 3, 5, 4, 6),  # 3-D, all distinct
    ((4,), 4, 4, 5, 3),  # B == T_q == T_k
    ((3,), 6, 2, 7, 5),  # T_q > T_k
    ((2, 3), 4, 5, 6, 7),  # 4-D (B, h, T, d)
    ((3, 2), 5, 5, 4, 8),  # 4-D, self-attention sizes
]


def inputs(lead, T_q, T_k, d_k, d_v, seed, scale=1.0):
    q = tensors.randn((*lead, T_q, d_k), seed, scale=scale)
    k = tensors.randn((*lead, T_k, d_k), seed + 1, scale=scale)
    v = tensors.randn((*lead, T_k, d_v), seed + 2)
    return [q, k, v]


def masks(lead, T_q, T_k, seed):
    """Masks of every broadcastable shape, each row with at least one allowed key."""
    out = [tensors.rand_mask((T_q, T_k), seed)]
    if lead:
        lengths = [T_k - (b % T_k) for b in range(lead[0])]
        pad = tensors.lengths_mask(lengths, T_k)  # (B, T_k)
        out.append(pad.reshape(lead[0], *([1] * len(lead)), T_k))  # (B, 1, T_k) or (B, 1, 1, T_k)
        out.append(tensors.rand_mask((*lead, T_q, T_k), seed + 1))
    return out


# -- likely causes --------------------------------------------------------------


def _alternatives(q, k, v, mask):
    """(cause, output, weights) for the usual mistakes, computed here from the inputs."""
    q, k, v = (x.detach().double().cpu() for x in (q, k, v))
    d_k, d_v = q.shape[-1], v.shape[-1]
    scores = q @ k.transpose(-2, -1)
    right = scores / math.sqrt(d_k)
    out = []
    for cause, factor in (
        ("cause_sdpa_divided_by_dk", 1 / d_k),
        ("cause_sdpa_divided_by_sqrt_dv", d_v**-0.5),
        ("cause_sdpa_not_scaled", 1.0),
        ("cause_sdpa_multiplied_by_sqrt_dk", math.sqrt(d_k)),
    ):
        if d_k == d_v and cause == "cause_sdpa_divided_by_sqrt_dv":
            continue
        out.append((Msg(cause), masked_softmax(scores * factor, mask, dim=-1)))
    out.append((Msg("cause_softmax_over_queries"), masked_softmax(right, mask, dim=-2)))
    if mask is not None:
        m = mask.cpu()
        out += [
            (Msg("cause_polarity_may_attend"), masked_softmax(right, ~m)),
            (causes.mask_ignored(), masked_softmax(right)),
            (Msg("cause_zero_fill"), torch.softmax(right.masked_fill(~m, 0.0), -1)),
            (Msg("cause_mask_after_softmax"), torch.softmax(right, -1) * m),
        ]
        if (~m).all(-1).any():
            out.append((Msg("cause_sdpa_dead_uniform"), torch.softmax(right.masked_fill(~m, -1e9), -1)))
    alts = [(cause, w @ v, w) for cause, w in out]
    w = masked_softmax(right, mask)
    if w.shape[-1] == w.shape[-2]:
        alts.append((Msg("cause_sdpa_weights_transposed"), w @ v, w.transpose(-1, -2)))
    return alts


def hints(args, kwargs, cfg):
    mask = kwargs.get("mask")
    cache = []

    def alts():
        if not cache:
            cache.extend(_alternatives(*args, mask))
        return cache

    def output(g, e):
        for cause, o, _ in alts():
            if compare.matches(g, o, cfg):
                return cause
        if torch.isnan(g).any():
            if mask is not None and (~mask).all(-1).any():
                return Msg("cause_nan_dead_row_guard")
            return Msg("cause_nan_overflow")
        return None

    def weights(g, e):
        for cause, _, w in alts():
            if compare.matches(g, w, cfg):
                return cause
        return causes.weights_hint(g, e, mask)

    return {"output": output, "weights": weights}


def _batched_cause(sub, args, dtype=torch.float64, device="cpu"):
    """When a batched call fails: does the same call, in the same dtype and on
    the same device, work on 2-D inputs?"""
    if args[0].dim() < 3:
        return None
    two_d = [a[(0,) * (a.dim() - 2)] for a in args]  # (T, d) each: the first batch item
    two_d = tensors.as_meta(tensors.to(two_d, dtype=dtype)) if device == "meta" else tensors.to(two_d, device, dtype)
    if sub.probe(NAME, two_d, options=CallOptions(device=device)).ok:
        return Msg("cause_batched_as_matrix")
    return None


def values(sub, cfg, args, kwargs, **opts):
    with failing.explain_errors(
        lambda: _batched_cause(sub, args, opts.get("dtype", torch.float64), opts.get("device", "cpu"))
    ):
        return value_checks.check_values(
            sub, cfg, NAME, args, kwargs, ref.scaled_dot_product_attention, OUT, hints=hints(args, kwargs, cfg), **opts
        )


def runs(sub, cfg, args, kwargs, **opts):
    """Outputs of the contract's shapes, dtype and device (values: the values checks)."""
    with failing.explain_errors(
        lambda: _batched_cause(sub, args, opts.get("dtype", torch.float64), opts.get("device", "cpu"))
    ):
        return value_checks.check_runs(sub, cfg, NAME, args, kwargs, ref.scaled_dot_product_attention, OUT, **opts)


def _recomputed(args, mask, cfg):
    """weights -> the cause whose own recomputation (`_alternatives`) gives them, or None."""
    alts = []

    def cause(w):
        alts.extend([] if alts else _alternatives(*args, mask))
        return next((why for why, _, want in alts if compare.matches(w, want, cfg)), None)

    return cause


def _exactly_zero(w, where, what, cause):
    """The weights `w` are exactly 0 `where` the mask hides a key; `cause(w)`: a recomputed cause or None."""
    leak = w[where]
    if leak.numel() and leak.abs().max() != 0:
        failing.fail(
            failing.caused(
                t("pairs_nonzero", what=what, n=int((leak != 0).sum()), max=number(float(leak.abs().max()), ".3g")),
                cause(w),
            )
        )


# -- families -------------------------------------------------------------------
def test_shapes_and_values(sub, cfg):
    """2-D, 3-D, 4-D; cross-attention; masks of every broadcastable shape; rows sum to 1."""
    for n, (lead, T_q, T_k, d_k, d_v) in enumerate(SIZES):
        args = inputs(lead, T_q, T_k, d_k, d_v, seed=100 + 10 * n)
        for kwargs in [{}] + [{"mask": m} for m in masks(lead, T_q, T_k, seed=105 + 10 * n)[-1:]]:
            got, _ = values(sub, cfg, args, kwargs)
            sums = got["weights"].double().sum(-1)
            value_checks.assert_close(
                sums,
                torch.ones_like(sums),
                t("weights_summed_keys", what=NAME),
                cfg,
                hint=lambda g, e: Msg("cause_rows_not_one_keys"),
            )


def test_mask_shapes(sub, cfg):
    """A mask is broadcast against the scores: (T_q, T_k), (B, 1, T_k), (B, 1, 1, T_k), full."""
    for n, size in enumerate((SIZES[1], SIZES[4])):
        lead, T_q, T_k, d_k, d_v = size
        args = inputs(*size, seed=160 + 10 * n)
        for mask in masks(lead, T_q, T_k, seed=165 + 10 * n):
            got, _ = values(sub, cfg, args, {"mask": mask})
            _exactly_zero(
                got["weights"],
                ~mask.expand(got["weights"].shape),
                t("with_mask_of_shape", name=NAME, shape=tuple(mask.shape)),
                _recomputed(args, mask, cfg),
            )


def test_matches_torch(sub, cfg):
    """Against torch.nn.functional.scaled_dot_product_attention (same mask polarity).
    torch gives NaN on a query with no allowed key: such rows are left out here
    (test_fully_masked_rows holds them to the contract)."""
    cases = [(SIZES[1], 0), (SIZES[3], 1), (SIZES[4], 2), (SIZES[0], 0)]
    for n, (size, which) in enumerate(cases):
        lead, T_q, T_k, d_k, d_v = size
        args = inputs(*size, seed=200 + 10 * n)
        mask = masks(lead, T_q, T_k, seed=205 + 10 * n)[which]
        got, _ = values(sub, cfg, args, {"mask": mask})
        _against_torch(got, args, mask, cfg)
    # one query with no allowed key: compared on the other rows only
    lead, T_q, T_k, d_k, d_v = SIZES[4]
    args = inputs(*SIZES[4], seed=250)
    mask = tensors.rand_mask((*lead, T_q, T_k), 251)
    mask[0, 1, 2] = False
    reply = calls.call(sub, NAME, args, {"mask": mask})
    got = calls.outputs(reply.value, calls.describe_call(NAME, args, {"mask": mask}), OUT)
    _against_torch(got, args, mask, cfg)


def _against_torch(got, args, mask, cfg):
    q, k, v = args
    lead, T_q, T_k = q.shape[:-2], q.shape[-2], k.shape[-2]
    keep = mask.expand(*lead, T_q, T_k).any(-1, keepdim=True)  # rows with an allowed key
    eye = torch.eye(T_k, dtype=torch.float64).expand(*lead, T_k, T_k)
    with torch.no_grad():
        t_out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        t_w = F.scaled_dot_product_attention(q, k, eye, attn_mask=mask)  # value = I gives the weights
    what = t("against_torch_sdpa", what=calls.describe_call(NAME, args, {"mask": mask}))
    h = hints(args, {"mask": mask}, cfg)
    for name, want in (("weights", t_w), ("output", t_out)):
        g = got[name]
        value_checks.check_meta(g, f"{what} -> {name}", tuple(want.shape), torch.float64, "cpu")
        value_checks.assert_close(
            torch.where(keep, g.double(), 0.0),
            torch.where(keep, want, 0.0),
            t("on_allowed_queries", what=what, name=name),
            cfg,
            hint=lambda _g, _e, g=g, e=want, n=name: h[n](g, e),
        )


def test_causal_structure(sub, cfg):
    """With a causal mask: weights above the diagonal exactly 0, and the output at
    position t does not change when keys/values after t change."""
    lead, T = (2,), 6
    args = inputs(lead, T, T, 4, 5, seed=300)
    mask = ref.causal_mask(T)
    got, _ = runs(sub, cfg, args, {"mask": mask})
    _exactly_zero(
        got["weights"], ~mask.expand(*lead, T, T), t("with_causal_mask", name=NAME), _recomputed(args, mask, cfg)
    )
    for s in (1, 4):
        q, k, v = (a.clone() for a in args)
        k[..., s:, :] += tensors.randn(k[..., s:, :].shape, 301 + s, scale=5.0)
        v[..., s:, :] += tensors.randn(v[..., s:, :].shape, 302 + s, scale=5.0)
        again = calls.outputs(calls.call(sub, NAME, [q, k, v], {"mask": mask}).value, NAME, OUT)
        value_checks.assert_close(
            again["output"][..., :s, :],
            got["output"][..., :s, :],
            t("output_after_future_change", what=t("with_causal_mask", name=NAME), s=s),
            cfg,
        )


def test_padding_structure(sub, cfg):
    """With a padding mask: padded keys get weight exactly 0, and changing padded
    keys/values changes nothing."""
    lead, T_q, T_k = (3,), 4, 6
    args = inputs(lead, T_q, T_k, 5, 3, seed=350)
    lengths = [6, 3, 1]
    pad = tensors.lengths_mask(lengths, T_k)  # (B, T_k)
    mask = pad.unsqueeze(1)  # (B, 1, T_k)
    got, _ = runs(sub, cfg, args, {"mask": mask})
    _exactly_zero(
        got["weights"],
        ~mask.expand(3, T_q, T_k),
        t("with_padding_mask", name=NAME),
        _recomputed(args, mask, cfg),
    )
    q, k, v = (a.clone() for a in args)
    k[~pad] += tensors.randn(k[~pad].shape, 351, scale=5.0)
    v[~pad] += tensors.randn(v[~pad].shape, 352, scale=5.0)
    again = calls.outputs(calls.call(sub, NAME, [q, k, v], {"mask": mask}).value, NAME, OUT)
    value_checks.assert_close(
        again["output"],
        got["output"],
        t("output_after_padded_change", what=t("with_padding_mask", name=NAME)),
        cfg,
    )


def test_fully_masked_rows(sub, cfg):
    """A query with no allowed key gets zero weights and a zero output, never NaN,
    and the gradients stay finite."""
    for n, (lead, T_q, T_k, d_k, d_v) in enumerate((SIZES[1], SIZES[4])):
        args = inputs(lead, T_q, T_k, d_k, d_v, seed=400 + 10 * n)
        mask = tensors.rand_mask((*lead, T_q, T_k), 405 + 10 * n)
        mask[(0,) * len(lead) + (1,)] = False  # one row
        mask[(lead[0] - 1,)] = False  # a whole batch item
        got, _ = runs(sub, cfg, args, {"mask": mask})
        dead = ~mask.any(-1)
        with torch.no_grad():
            unmasked = ref.scaled_dot_product_attention(*args)[1]
            masked = ref.scaled_dot_product_attention(*args, mask=mask)[1]
        value_checks.check_dead_rows(
            calls.describe_call(NAME, args, {"mask": mask}),
            got["weights"],
            dead,
            unmasked,
            others=[(got["output"], dead)],
            masked=masked,
            cfg=cfg,
        )
    grads.check_finite_grads(sub, NAME, args, {"mask": mask}, OUT, seed=420)


def test_stable_for_large_scores(sub, cfg):
    """Scores around 1e4: subtract the row maximum before exp."""
    args = inputs((2,), 3, 5, 4, 6, seed=450, scale=100.0)
    mask = tensors.rand_mask((2, 3, 5), 451)
    for kwargs in ({}, {"mask": mask}):
        values(sub, cfg, args, kwargs)


def test_worked_example(sub, cfg):
    """d_k = 1: q = [2], keys [2] and [1], values [10] and [4]: weights [0.8808, 0.1192], output 9.2848."""
    q = torch.tensor([[2.0]], dtype=torch.float64)
    k = torch.tensor([[2.0], [1.0]], dtype=torch.float64)
    v = torch.tensor([[10.0], [4.0]], dtype=torch.float64)
    values(sub, cfg, [q, k, v], {})


def test_gradients(sub, cfg):
    for n, size in enumerate((SIZES[3], SIZES[4])):
        lead, T_q, T_k = size[:3]
        args = inputs(*size, seed=500 + 10 * n)
        mask = masks(lead, T_q, T_k, seed=505 + 10 * n)[-1]
        with failing.explain_errors(lambda: _batched_cause(sub, args)):
            grads.check_grads(
                sub,
                cfg,
                NAME,
                args,
                {"mask": mask},
                ref.scaled_dot_product_attention,
                OUT,
                seed=510 + 10 * n,
                hints=hints(args, {"mask": mask}, cfg),
            )


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    size = SIZES[4]
    args = inputs(*size, seed=600)
    mask = masks(size[0], size[1], size[2], seed=601)[1]
    with failing.explain_errors(lambda: _batched_cause(sub, args, dtype, device)):
        dtypes.check_in_dtype(
            sub,
            cfg,
            NAME,
            args,
            {"mask": mask},
            ref.scaled_dot_product_attention,
            OUT,
            dtype,
            device,
            hints=hints(args, {"mask": mask}, cfg),
        )


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows tensors built on the CPU."""
    size = SIZES[1]
    args = inputs(*size, seed=700)
    mask = tensors.rand_mask((2, 3, 5), 701)
    for kwargs in ({}, {"mask": mask}):
        meta_args, meta_kwargs = tensors.as_meta(tensors.to(args, dtype=torch.float32)), tensors.as_meta(kwargs)
        reply = sub.call(NAME, meta_args, meta_kwargs, CallOptions(device="meta"))
        if not reply.ok and "device" in reply.error:
            failing.fail(
                failing.caused(
                    t(
                        "on_meta_device",
                        what=calls.describe_call(NAME, meta_args, meta_kwargs),
                        error=reply.error.rstrip(".!"),
                    ),
                    Msg("cause_no_device_query"),
                )
            )
        runs(sub, cfg, args, kwargs, dtype=torch.float32, device="meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    args = inputs(*SIZES[2], seed=800)
    mask = masks(*SIZES[2][:3], seed=801)[1]
    with failing.explain_errors(lambda: _batched_cause(sub, args)):
        runs(sub, cfg, args, {"mask": mask})
        properties.check_inputs_unchanged(sub, NAME, args, {"mask": mask})


@pytest.mark.property
def test_from_scratch(sub, cfg, cells, provided):
    args = inputs(*SIZES[1], seed=850)
    runs(sub, cfg, args, {})
    properties.check_from_scratch(sub, cells, provided, NAME, args)


@pytest.mark.property
def test_vectorised(sub, cfg):
    args = inputs(*SIZES[1], seed=900)
    runs(sub, cfg, args, {})

    def make(b, T_q):
        return inputs((b,), T_q, 5, 4, 6, seed=910), {"mask": torch.ones(b, 1, 5, dtype=torch.bool)}

    # T_k is 5: a query length on both sides of it (a branch on T_q > T_k is no loop)
    properties.check_vectorised(sub, NAME, lambda b: make(b, 3), (2, 4, 6), "batch")
    properties.check_vectorised(sub, NAME, lambda n: make(2, n), (2, 7, 12), "query_length")
