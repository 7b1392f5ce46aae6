"""What the transformer_block suites share: a module case (the class as the worker
builds it, the judge's parameters loaded into it by name, its inputs), calling it,
its values against the reference module's with the same parameters, the
gradients of every parameter, its dtype and device, and the parts of the
reference a likely cause is computed from.

The yardstick is always the reference (`solutions/transformer_block.py`, run here
in float64 on the CPU, its parameters rounded to the dtype the student's module
holds), never the student's code.

Each bug is charged once: while a graded class runs, the judge stands in for the
other graded parts it uses (`judge.stand_in`): the student's TransformerLM builds the
judge's DecoderBlock (a module with the reference's parameter names, answered by the
judge forward and backward) and calls the judge's positional_encoding (its device
and dtype cross the wire as tags); the student's DecoderBlock builds the judge's
FeedForward.
"""

import torch
from torch.nn import functional as F

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import (
    calls,
    causes,
    compare,
    counterexamples,
    dtypes,
    failing,
    modules,
    properties,
    tensors,
    value_checks,
)


def pad_mask_of(B, T, seed, leading=True):
    """(B, T) bool, True at real tokens: the first row full, the others padded after
    their tokens, and (`leading`) the last one before them too (a query with no
    allowed key), at least one real token in every row."""
    g = tensors.gen(seed)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    lengths[0] = T
    mask = tensors.lengths_mask(lengths, T)
    if leading and B > 1 and T > 2:
        mask[-1] = torch.arange(T) >= T // 2  # padding before the tokens
    return mask


# -- a module case ----------------------------------------------------------------------
class ModuleCase(modules.Case):
    """One call of a graded class (`modules.Case`), made from named sizes and a seed: the
    judge's parameters (`modules.random_state`) and the forward's inputs (`inputs`); subclasses
    say the class, its constructor's arguments and inputs, and a case at other sizes (`at`)."""

    SOLUTIONS = ref

    def __init__(self, sizes, seed, scale=1.0):
        self.sizes, self.seed, self.scale = dict(sizes), seed, scale
        self.state = modules.random_state(self.reference_module(), seed, scale)
        self.args, self.kwargs = self.inputs(seed + 50)

    def inputs(self, seed):
        raise NotImplementedError

    def named_sizes(self):
        return self.sizes


def heads_folded(got, want):
    """Weights (B, T, T) where the contract returns (B, n_heads, T, T): the head axis gone, a
    shape the contract fixes (nn.MultiheadAttention's default averages the heads' maps)."""
    return Msg("cause_tb_weights_heads_folded") if len(want) == 4 and got == (want[0], *want[2:]) else None


SHAPE_HINTS = {"weights": heads_folded}  # {output: a likely cause from its shape alone}


# -- the student's calls ------------------------------------------------------------------
def call(sub, case, args=None, kwargs=None, dtype=torch.float64, device="cpu", **opts):
    """Call the student's module built and loaded as `case` says; fail with its error."""
    args = case.args if args is None else args
    kwargs = case.kwargs if kwargs is None else kwargs
    reply = sub.call(case.NAME, args, kwargs, CallOptions(**case.opts(dtype, device), **opts))
    if reply.ok:
        return reply
    cause = None
    if "no parameter" in reply.error or "has shape" in reply.error:
        cause = Msg("cause_tb_parameter_names")
    if str(device) == "meta" and "device" in reply.error:
        cause = Msg("cause_tb_meta_device")
    calls.call_failed(case.describe(args, kwargs, device, dtype), reply.error, cause)


def runs(sub, case, dtype=torch.float64, device="cpu", args=None, kwargs=None, plausible=True, hints=None, **opts):
    """The module returns the contract's outputs: the reference's shapes, the dtype it
    was moved to, the inputs' device, and plausible values (`c.check_plausible`, with the
    likely causes `hints` recompute; on the meta device, the same call on the CPU first).
    Returns (got, what, reply)."""
    if str(device) == "meta":
        runs(sub, case, dtype, "cpu", args, kwargs, hints=hints)
    a = tensors.to(case.args if args is None else args, device, dtype)
    k = tensors.to(case.kwargs if kwargs is None else kwargs, device, dtype)
    if str(device) == "meta":
        a, k = tensors.as_meta(a), tensors.as_meta(k)
    reply = call(sub, case, a, k, dtype, device, **opts)
    what = case.describe(a, k, device, None if dtype == torch.float64 else dtype)
    got = calls.outputs(reply.value, what, list(case.OUT))
    expected = case.expected(dtype, args, kwargs)
    for n, exp in expected.items():
        value_checks.check_meta(got[n], f"{what} -> {n}", tuple(exp.shape), dtype, device, hint=SHAPE_HINTS.get(n))
    if str(device) != "meta" and plausible:
        value_checks.check_plausible(got, expected, what, hints)
    return got, what, reply


def values(sub, cfg, case, hints=None, dtype=torch.float64):
    """The student's outputs against the reference module's (on the CPU), with a
    counterexample when they differ."""
    got, what, _ = runs(sub, case, dtype, hints=hints)
    expected = case.expected(dtype)
    with counterexamples.module_counterexample_on_failure(
        sub, cfg, case.NAME, got, expected, dtype, "cpu", *case.fresh()
    ):
        value_checks.check_outputs(got, expected, what, cfg, dtype, "cpu", hints)
    return got, expected


def in_dtype(sub, cfg, case, dd, hints=None):
    """The dtype-and-device property of a module: moved to `dtype` on `device`, its
    outputs keep them and hold no NaN or inf; off float64, when the module is right in
    float64, they are as close to the reference as `dtype` allows."""
    device, dtype = dd
    got, what, _ = runs(sub, case, dtype, device, hints=hints)
    dtypes.judge_in_dtype(
        got,
        case.expected(dtype),
        lambda: compare.close_enough(runs(sub, case)[0], case.expected(), cfg),
        what,
        cfg,
        dtype,
        device,
        hints,
        "cause_tb_overflow",
    )


def check_parameters(sub, name, construct, want, what):
    """The module built from `construct` has exactly the contract's parameter names and
    shapes (`want`: {name: shape}), moved by .to(float64)."""
    reply = sub.call(name, options=CallOptions(construct=construct, to={"dtype": "float64"}, invoke=False))
    if not reply.ok:
        calls.call_failed(what, reply.error)

    def extra_cause(first):
        learned = any(k in first.split(".")[0] for k in ("pos", "wpe"))
        return Msg("cause_tb_learned_positions") if learned else Msg("cause_tb_extra_parameter")

    modules.check_parameter_table(
        reply,
        want,
        what,
        lambda: Msg("cause_tb_parameter_names"),
        lambda _name, got, expected: Msg("cause_tb_weight_transposed") if got == tuple(reversed(expected)) else None,
        extra_cause,
    )


def check_param_grads(sub, cfg, case, seed, grad_inputs=True):
    """float64 gradients (random cotangents) w.r.t. every floating input (`grad_inputs`)
    and every parameter, against the reference module's with the same parameters."""
    args = [
        a.detach().clone().requires_grad_(grad_inputs and a.is_floating_point()) if isinstance(a, torch.Tensor) else a
        for a in case.args
    ]
    expected = case.expected()
    cot = [tensors.randn(tuple(e.shape), seed + k) for k, e in enumerate(expected.values())]
    got, what, reply = runs(sub, case, args=args, cotangents=cot)
    with counterexamples.module_counterexample_on_failure(
        sub, cfg, case.NAME, got, expected, torch.float64, "cpu", *case.fresh()
    ):
        value_checks.check_outputs(got, expected, what, cfg, torch.float64, "cpu")
    grads = reply.grads or {}
    line = calls.grads_error(grads)
    if line is not None:
        failing.fail(calls.with_cause(line, causes.detached(), calls.gradients_of(what)))
    m = case.reference()
    r_args = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
    out = m(*r_args, **case.kwargs)
    outs = list(out) if isinstance(out, tuple) else [out]
    params = dict(m.named_parameters())
    names = list(case.state)
    leaves = [a for a in r_args if isinstance(a, torch.Tensor) and a.requires_grad]
    r_grads = torch.autograd.grad(outs, leaves + [params[n] for n in names], cot, allow_unused=True)
    got_inputs = grads.get("inputs") or []
    for i, rg in enumerate(r_grads[: len(leaves)]):
        label = t("gradient_wrt_argument", what=what, i=i + 1)
        g = got_inputs[i] if i < len(got_inputs) else None
        if g is None:
            failing.fail(failing.caused(t("no_gradient_reached", what=label), causes.detached()))
        value_checks.assert_close(
            g, rg if rg is not None else torch.zeros_like(g.double()), label, cfg, torch.float64, compared="gradient"
        )
    got_params = grads.get("params") or {}
    for name, rg in zip(names, r_grads[len(leaves) :]):
        g = got_params.get(name)
        label = t("gradient_wrt_parameter", what=what, name=name)
        if g is None:
            failing.fail(
                failing.caused(
                    t("no_gradient_reached_parameter", what=label), Msg("cause_lab_parameter_unused", name=name)
                )
            )
        value_checks.assert_close(g, rg if rg is not None else torch.zeros_like(g.double()), label, cfg, torch.float64)


def check_vectorised(sub, make, name):
    """The count of torch operations does not grow with the batch or the positions
    (`make(B, T)`: a case; `c.ops_grow`); a loop over the blocks is fine (their number
    does not change here)."""
    properties.no_tracing_tampering(sub, name)
    runs(sub, make(2, 4))  # its real outputs (the property is about them)
    for what_grows, at, sizes in (
        ("batch", lambda b: make(b, 4), (2, 4, 6)),
        ("sequence_length", lambda n: make(2, n), (3, 6, 9)),
    ):
        count = lambda size, at=at: call(sub, at(size), trace=True).op_count  # noqa: E731
        properties.ops_grow(name, count, sizes, what_grows, cause_key="cause_python_loop_short")


# -- the reference's parts, for likely causes ------------------------------------------------
def layer_norm(x, ln, how="ok"):
    """A layer norm with `ln`'s parameters: the right one, over the wrong axis
    ("positions": dim 1), or by hand with the unbiased std plus eps ("unbiased")."""
    w, b = ln.weight, ln.bias
    if how == "positions":
        mean = x.mean(1, keepdim=True)
        var = x.var(1, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + ln.eps) * w + b
    if how.startswith("unbiased"):
        eps = 1e-6 if how == "unbiased_1e-6" else ln.eps  # the Annotated Transformer's eps, or nn.LayerNorm's
        return w * (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + eps) + b
    return F.layer_norm(x, ln.normalized_shape, w, b, ln.eps)


def feed_forward(x, ffn, act="relu"):
    """FeedForward with `ffn`'s parameters and another activation."""
    h = ffn.linear1(x)
    h = {
        "relu": torch.relu,
        "gelu": F.gelu,
        "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
        "none": lambda v: v,
    }[act](h)
    return ffn.linear2(h)


def block_mask(T, pad_mask, causal=True, padding=True, combine="and"):
    """The attention's mask (True: may attend), or one of its mistakes: `causal`, `padding`
    which masks it holds; `combine` "and" (right), "or" (causal | padding), "inverted" (the
    padding's polarity inverted: causal & ~pad_mask)."""
    mask = torch.ones(T, T, dtype=torch.bool).tril() if causal else None
    if pad_mask is not None and padding:
        keys = (~pad_mask if combine == "inverted" else pad_mask)[:, None, None, :]
        mask = keys if mask is None else mask | keys if combine == "or" else mask & keys
    return mask


def block(
    x,
    blk,
    pad_mask=None,
    order="pre",
    ln="ok",
    act="relu",
    causal=True,
    padding=True,
    residual=(True, True),
    combine="and",
    positions=False,
):
    """A decoder block with `blk`'s parameters and one mistake: `order` "pre" (right),
    "post" (ln(x + sublayer(x))), "normed_residual" (x = ln(x) + sublayer(ln(x))),
    "one_norm" (ln1 before both sublayers), "parallel" (x + attn(ln1 x) + ffn(ln2 x));
    `ln` the layer norm's axis or formula; `act` the feed-forward's activation; `causal`,
    `padding`, `combine` the mask that reaches the attention (`block_mask`); `residual`
    which residuals are added; `positions` the positional encoding added to x first.
    Returns (output, weights)."""
    T = x.shape[1]
    mask = block_mask(T, pad_mask, causal, padding, combine)
    if positions:
        x = x + sinusoid(T, x.shape[2])

    def norm(v, which):
        return layer_norm(v, which, ln)

    def ff(v):
        return feed_forward(v, blk.ffn, act)

    if order == "post":
        a, w = blk.attn(x, x, x, mask)
        x = norm(x + a, blk.ln1)
        return norm(x + ff(x), blk.ln2), w
    h = norm(x, blk.ln1)
    a, w = blk.attn(h, h, h, mask)
    if order == "parallel":
        return x + a + ff(norm(x, blk.ln2)), w
    start = h if order == "normed_residual" else x
    x = start + a if residual[0] else a
    h2 = norm(x, blk.ln1 if order == "one_norm" else blk.ln2)
    start = h2 if order == "normed_residual" else x
    return (start + ff(h2) if residual[1] else ff(h2)), w


def sinusoid(T, D, how="ok"):
    """The positional encoding (float64) and its usual mistakes: "concat" (sines then
    cosines), "swapped" (cos on the even features), "feature_exponent" (10000^(j / D) for
    feature j), "pair_exponent" (10000^(i / D) for pair i, no factor 2), "no_d" (10000^(2i),
    the division by D left out), "from_one" (positions 1 .. T)."""
    t_ = torch.arange(T, dtype=torch.float64) + (1 if how == "from_one" else 0)
    if how == "feature_exponent":
        j = torch.arange(D, dtype=torch.float64)
        angles = t_[:, None] / 10000.0 ** (j / D)
        return torch.where(j % 2 == 0, angles.sin(), angles.cos())
    two_i = torch.arange(0, D, 2, dtype=torch.float64)
    exponent = {"pair_exponent": two_i / 2 / D, "no_d": two_i}.get(how, two_i / D)
    angles = t_[:, None] / 10000.0**exponent
    if how == "concat":
        return torch.cat([angles.sin(), angles.cos()], -1)[:, :D]
    pair = [angles.cos(), angles.sin()] if how == "swapped" else [angles.sin(), angles.cos()]
    return torch.stack(pair, -1).flatten(1)[:, :D]


# each of `sinusoid`'s mistakes and its likely cause (a key named whole, so the message tests find it)
PE_MISTAKES = {
    "concat": "cause_tb_pe_concat",
    "swapped": "cause_tb_pe_swapped",
    "feature_exponent": "cause_tb_pe_feature_exponent",
    "pair_exponent": "cause_tb_pe_pair_exponent",
    "no_d": "cause_tb_pe_no_d",
    "from_one": "cause_tb_pe_from_one",
}


def pe_cause(how):
    return Msg(PE_MISTAKES[how])


def first_match(got, alternatives, cfg):
    """The cause of the first alternative (cause, tensor) `got` matches (or None)."""
    for cause, want in alternatives:
        if want is not None and compare.matches(got, want, cfg):
            return cause
    return None


def sinusoid_at_frequencies(got):
    """The encoding laid out as the contract asks (sin, cos interleaved, positions from 0) at
    the frequencies `got` (T, D) shows at position 1 (each pair's angle there), or None when
    it has no position 1: a right layout with wrong frequencies reproduces itself."""
    g = got.detach().double().cpu()
    if g.dim() != 2 or g.shape[0] < 2 or g.shape[1] % 2:
        return None
    freq = torch.atan2(g[1, 0::2], g[1, 1::2])  # each pair's angle at t = 1: its frequency
    angles = torch.arange(g.shape[0], dtype=torch.float64)[:, None] * freq
    return torch.stack([angles.sin(), angles.cos()], -1).flatten(1)


def pe_alternatives(got, T, D):
    """(cause, tensor) of the encoding's usual mistakes at (T, D), then the right layout at
    `got`'s own frequencies (`sinusoid_at_frequencies`)."""
    alts = [(pe_cause(how), sinusoid(T, D, how)) for how in PE_MISTAKES]
    return alts + [(Msg("cause_tb_pe_frequencies"), sinusoid_at_frequencies(got))]


def inputs_unchanged(sub, case):
    """The call leaves its inputs as they were (after a call that runs: `runs`)."""
    runs(sub, case)
    opts = case.opts()
    opts.pop("device")
    properties.check_inputs_unchanged(sub, case.NAME, case.args, case.kwargs, **opts)
