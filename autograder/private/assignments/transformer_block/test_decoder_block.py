"""Hidden tests: DecoderBlock(d_model, n_heads, d_ff) and its forward(x, pad_mask=None)
-> (output (B, T, D), weights (B, n_heads, T, T)): pre-norm, x + attn(ln1(x)) with the
causal mask (and the padding mask when given), then x + ffn(ln2(x)).

The worker builds the student's module (around the provided MultiHeadAttention)
and loads the judge's parameters by name (ln1, attn.{q,k,v,out}_proj, ln2,
ffn.linear1, ffn.linear2); the yardstick is the reference block with the same
parameters, in float64. Causality and padding are shown on the student's own
module with the judge's parameters: no training needed.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.assignments.transformer_block import common
from autograder.private.suites import compare, failing, tensors, value_checks

QUESTION = "decoder_block"
NAME = "DecoderBlock"
OUT = ("output", "weights")
# (B, T, D, h, F): all different; B == T; one head; one position
SIZES = [(3, 5, 8, 2, 12), (4, 4, 12, 3, 10), (2, 6, 6, 1, 9), (2, 1, 8, 4, 6)]


class Case(common.ModuleCase):
    NAME = NAME
    OUT = OUT
    ARG_NAMES = ("x",)

    def __init__(self, B, T, D, h, F, seed, padded=False, scale=1.0):
        self.padded = padded
        super().__init__({"B": B, "T": T, "D": D, "n_heads": h, "F": F}, seed, scale)

    def ctor(self):
        s = self.sizes
        return [s["D"], s["n_heads"], s["F"]]

    def inputs(self, seed):
        s = self.sizes
        x = tensors.randn((s["B"], s["T"], s["D"]), seed)
        if not self.padded:
            return [x], {}
        return [x], {"pad_mask": common.pad_mask_of(s["B"], s["T"], seed + 1)}

    def at(self, sizes, seed):
        if sizes["D"] % sizes["n_heads"]:
            return None
        return Case(sizes["B"], sizes["T"], sizes["D"], sizes["n_heads"], sizes["F"], seed, self.padded)


def alternatives(case, x=None, pad_mask=None):
    """The outputs of the usual mistakes, from the reference's parts with the case's parameters."""
    m = case.reference()
    x = case.args[0] if x is None else x
    pad = case.kwargs.get("pad_mask") if pad_mask is None else pad_mask
    alts = [
        (Msg("cause_tb_post_norm"), {"order": "post"}),
        (Msg("cause_tb_no_attention_residual"), {"residual": (False, True)}),
        (Msg("cause_tb_no_ffn_residual"), {"residual": (True, False)}),
        (Msg("cause_tb_normed_residual"), {"order": "normed_residual"}),
        (Msg("cause_tb_one_norm"), {"order": "one_norm"}),
        (Msg("cause_tb_parallel"), {"order": "parallel"}),
        (Msg("cause_tb_ln_positions"), {"ln": "positions"}),
        (Msg("cause_tb_ln_unbiased"), {"ln": "unbiased"}),
        (Msg("cause_tb_ln_unbiased"), {"ln": "unbiased_1e-6"}),
        (Msg("cause_tb_block_gelu"), {"act": "gelu"}),
        (Msg("cause_tb_block_gelu"), {"act": "gelu_tanh"}),
        (Msg("cause_tb_no_causal_mask"), {"causal": False}),
        (Msg("cause_tb_block_adds_positions"), {"positions": True}),
    ]
    if pad is not None:
        alts += [
            (Msg("cause_tb_pad_mask_ignored"), {"padding": False}),
            (Msg("cause_tb_no_mask"), {"causal": False, "padding": False}),
            (Msg("cause_tb_pad_mask_inverted"), {"combine": "inverted"}),
            (Msg("cause_tb_masks_or"), {"combine": "or"}),
        ]
    with torch.no_grad():
        return [(cause, common.block(x, m, pad, **kw)) for cause, kw in alts]


def hints(case, cfg):
    """A cause only where its recomputation reproduces what the block returned: the block
    calls the provided attention, so a cause about a softmax's masking (`c.weights_hint`)
    would name code the student did not write."""
    cache = []

    def alts():
        if not cache:
            cache.extend(alternatives(case))
        return cache

    def output(g, e):
        return common.first_match(g, [(cause, o) for cause, (o, _) in alts()], cfg)

    def weights(g, e):
        return common.first_match(g, [(cause, w) for cause, (_, w) in alts()], cfg)

    return {"output": output, "weights": weights}


def test_parameters(sub, cfg):
    """ln1, attn (the provided MultiHeadAttention), ln2, ffn: the names the judge loads by."""
    D, h, F = 8, 2, 12
    want = {"ln1.weight": (D,), "ln1.bias": (D,), "ln2.weight": (D,), "ln2.bias": (D,)}
    for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
        want[f"attn.{p}.weight"], want[f"attn.{p}.bias"] = (D, D), (D,)
    want.update(
        {"ffn.linear1.weight": (F, D), "ffn.linear1.bias": (F,), "ffn.linear2.weight": (D, F), "ffn.linear2.bias": (D,)}
    )
    common.check_parameters(sub, NAME, {"args": [D, h, F]}, want, f"DecoderBlock({D}, {h}, {F})")


def test_shapes_and_values(sub, cfg):
    """Several sizes and heads, with and without a padding mask (padding after the tokens and before them)."""
    cases = [Case(*size, seed=100 + 10 * k) for k, size in enumerate(SIZES)]
    cases += [Case(*SIZES[0], seed=150, padded=True), Case(*SIZES[1], seed=160, padded=True)]
    for case in cases:
        common.values(sub, cfg, case, hints(case, cfg))


def test_float32(sub, cfg):
    """A float32 block keeps float32 and matches the reference within float32's tolerance."""
    case = Case(*SIZES[1], seed=200, padded=True)
    got, what, _ = common.runs(sub, case, torch.float32, hints=hints(case, cfg))
    value_checks.check_outputs(got, case.expected(torch.float32), what, cfg, torch.float32, "cpu", hints(case, cfg))


def test_pre_norm(sub, cfg):
    """Told apart from a post-norm block (ln(x + sublayer(x))): a large, shifted input,
    whose sum a post-norm block would normalise and a pre-norm block carries through."""
    case = Case(*SIZES[0], seed=250)
    case.args = [case.args[0] * 4.0 + 3.0]
    got, what, _ = common.runs(sub, case)
    expected = case.expected()
    post = alternatives(case)[0][1][0]
    if compare.matches(got["output"], post, cfg):
        failing.fail(failing.caused(t("tb_block_is_post_norm", what=what), Msg("cause_tb_post_norm")))
    value_checks.check_outputs(got, expected, what, cfg, torch.float64, "cpu", hints(case, cfg))


def test_causal_structure(sub, cfg):
    """Weights exactly 0 above the diagonal in every head, and changing x at positions
    >= s changes nothing at positions < s (the student's module, the judge's parameters)."""
    case = Case(*SIZES[0], seed=300)
    got, what, _ = common.runs(sub, case)
    w = got["weights"].double()
    above = ~torch.ones(w.shape[-2:], dtype=torch.bool).tril()
    leak = w[..., above]
    if leak.numel() and leak.abs().max() != 0:
        failing.fail(
            failing.caused(
                t(
                    "above_diagonal_nonzero",
                    what=what,
                    n=int((leak != 0).sum()),
                    max=number(float(leak.abs().max()), ".3g"),
                ),
                hints(case, cfg)["weights"](got["weights"], None),
            )
        )
    for s in (1, 3):
        x = case.args[0].clone()
        x[:, s:] += tensors.randn(x[:, s:].shape, 301 + s, scale=3.0)
        again, _, _ = common.runs(sub, case, args=[x])
        value_checks.assert_close(
            again["output"][:, :s],
            got["output"][:, :s],
            t("tb_output_after_future_change", what=what, s=s),
            cfg,
            hint=lambda g, e: hints(case, cfg)["output"](got["output"], None),
        )


def test_padding_changes_nothing(sub, cfg):
    """Padded keys get weight exactly 0 from every query, changing x at padded positions
    changes nothing at the real ones, and a query with no allowed key (padding before the
    tokens) gives finite outputs, never NaN."""
    case = Case(*SIZES[0], seed=400, padded=True)
    pad = case.kwargs["pad_mask"]
    got, what, _ = common.runs(sub, case, plausible=False)
    out = got["output"].double()
    if not torch.isfinite(out).all() or not torch.isfinite(got["weights"].double()).all():
        failing.fail(failing.caused(t("tb_block_nonfinite", what=what), Msg("cause_tb_dead_row_nan")))
    w = got["weights"].double()
    leak = w[(~pad)[:, None, None, :].expand(w.shape)]
    if leak.numel() and leak.abs().max() != 0:
        failing.fail(
            failing.caused(
                t("padded_keys_nonzero_heads", what=what, max=number(float(leak.abs().max()), ".3g")),
                hints(case, cfg)["weights"](got["weights"], None),
            )
        )
    x = case.args[0].clone()
    x[~pad] += tensors.randn(x[~pad].shape, 401, scale=3.0)
    again, _, _ = common.runs(sub, case, args=[x], plausible=False)
    value_checks.assert_close(
        again["output"][pad],
        got["output"][pad],
        t("tb_real_after_padded_change", what=what),
        cfg,
        hint=lambda g, e: hints(case, cfg)["output"](got["output"], None),
    )


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. x and every parameter (those of the provided attention too)."""
    common.check_param_grads(sub, cfg, Case(*SIZES[0], seed=500, padded=True), 510)


def test_dtype_and_device(sub, cfg, dd):
    case = Case(*SIZES[0], seed=600, padded=True, scale=0.7)
    common.in_dtype(sub, cfg, case, dd, hints(case, cfg))


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows a mask or tensors built on the CPU."""
    common.runs(sub, Case(*SIZES[0], seed=700, padded=True), torch.float32, "meta")
    common.runs(sub, Case(*SIZES[0], seed=710), torch.float32, "meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    case = Case(*SIZES[0], seed=800, padded=True)
    common.inputs_unchanged(sub, case)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The count of torch operations does not grow with the batch or the positions."""
    common.check_vectorised(
        sub,
        lambda B, T: Case(B, T, 8, 2, 12, seed=900, padded=True),
        NAME,
    )
