"""Hidden tests: TransformerLM(vocab_size, d_model, n_heads, d_ff, n_layers) and its
forward(tokens, pad_mask=None) -> logits (B, T, V): embed(tokens) plus the
positional encoding, the blocks, ln_f, head.

The worker builds the student's model and loads the judge's parameters by name
(embed, blocks.{i}.*, ln_f, head); the yardstick is the reference model with the
same parameters, in float64. The DecoderBlocks the student's model builds (and
their FeedForwards) and the positional_encoding it calls are the judge's
(`judge.stand_in`: a class stand-in answers construct, forward and backward), so
a mistake in one of those parts costs points under its own question only. With
grading.yml `scoring.isolate_dependencies: false` the model runs with its own
parts, and when one of them is what differs the likely cause says so.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.assignments.transformer_block import common
from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import compare, failing, tensors, value_checks

QUESTION = "transformer_lm"
NAME = "TransformerLM"
OUT = ("logits",)
# (B, T, V, D, h, F, L): all different; B == T; one layer; one position
SIZES = [(3, 6, 11, 8, 2, 12, 2), (4, 4, 7, 12, 3, 10, 1), (2, 9, 13, 6, 1, 9, 3), (2, 1, 5, 8, 4, 6, 2)]


class Case(common.ModuleCase):
    NAME = NAME
    OUT = OUT
    ARG_NAMES = ("tokens",)

    def __init__(self, B, T, V, D, h, F, L, seed, padded=False, tokens=None, scale=1.0):
        self.padded, self.given = padded, tokens
        super().__init__({"B": B, "T": T, "V": V, "D": D, "n_heads": h, "F": F, "L": L}, seed, scale)

    def ctor(self):
        s = self.sizes
        return [s["V"], s["D"], s["n_heads"], s["F"], s["L"]]

    def inputs(self, seed):
        s = self.sizes
        tokens = (
            self.given
            if self.given is not None
            else torch.randint(s["V"], (s["B"], s["T"]), generator=tensors.gen(seed))
        )
        if not self.padded:
            return [tokens], {}
        return [tokens], {"pad_mask": common.pad_mask_of(s["B"], s["T"], seed + 1)}

    def at(self, sizes, seed):
        if sizes["D"] % sizes["n_heads"] or sizes["D"] % 2 or sizes["V"] < 2:
            return None
        s = sizes
        return Case(s["B"], s["T"], s["V"], s["D"], s["n_heads"], s["F"], s["L"], seed, self.padded)


def _forward(case, positions="before", pe=None, scale=False, final_norm=True, tied=None, padding=True):
    """The reference model's forward with one mistake: `positions` "before" (right),
    "after" (added after the blocks), "none"; `pe` another encoding (added as it is:
    (T, D), or (B, 1, D) along the batch); `scale` the embeddings times sqrt(D); no
    `final_norm`; a head `tied` to the embedding, the one matrix holding the "embed"
    weight or the "head" weight (loaded last into a shared parameter); the padding mask
    not passed to the blocks."""
    m = case.reference()
    (tokens,) = case.args
    pad = case.kwargs.get("pad_mask") if padding else None
    T, D = tokens.shape[1], m.embed.weight.shape[1]
    enc = common.sinusoid(T, D) if pe is None else pe.double()
    shared = m.head.weight if tied == "head" else m.embed.weight
    with torch.no_grad():
        x = (shared[tokens] if tied else m.embed(tokens)) * (D**0.5 if scale else 1.0)
        if positions == "before":
            x = x + enc
        for blk in m.blocks:
            x, _ = blk(x, pad)
        if positions == "after":
            x = x + enc
        x = m.ln_f(x) if final_norm else x
        return x @ shared.T if tied else m.head(x)


def alternatives(case):
    alts = [
        (Msg("cause_tb_positions_after_blocks"), _forward(case, positions="after")),
        (Msg("cause_tb_no_positions"), _forward(case, positions="none")),
        (Msg("cause_tb_embedding_scaled"), _forward(case, scale=True)),
        (Msg("cause_tb_no_final_norm"), _forward(case, final_norm=False)),
        (Msg("cause_tb_tied_head"), _forward(case, tied="embed")),
        (Msg("cause_tb_tied_head"), _forward(case, tied="head")),
    ]
    if case.kwargs.get("pad_mask") is not None:
        alts.append((Msg("cause_tb_lm_pad_mask_ignored"), _forward(case, padding=False)))
    B, T, D = *case.args[0].shape, case.sizes["D"]
    alts.append((Msg("cause_tb_positions_batch_axis"), _forward(case, pe=common.sinusoid(B, D)[:, None, :])))
    alts += [(common.pe_cause(how), _forward(case, pe=common.sinusoid(T, D, how))) for how in common.PE_MISTAKES]
    return alts


def _parts_cause(sub, cfg, case):
    """When no mistake of the model's own explains its logits and the model ran with its
    own parts (`scoring.isolate_dependencies: false`; otherwise they are the judge's):
    its positional_encoding or its DecoderBlock, called on the case's sizes, differ from
    the reference's."""
    if cfg.scoring.get("isolate_dependencies", True):
        return None
    T, D = case.args[0].shape[1], case.sizes["D"]
    reply = sub.call("positional_encoding", [T, D], {}, CallOptions(isolate=[]))
    pe = reply.value if reply.ok else None
    if (
        not isinstance(pe, torch.Tensor)
        or tuple(pe.shape) != (T, D)
        or not compare.matches(pe.double(), ref.positional_encoding(T, D, dtype=torch.float64), cfg)
    ):
        return Msg("cause_tb_lm_your_positions")
    m = case.reference()
    with torch.no_grad():
        x = m.embed(case.args[0]) + common.sinusoid(T, D)
    blk = m.blocks[0]
    state = {k.removeprefix("blocks.0."): v for k, v in case.state.items() if k.startswith("blocks.0.")}
    construct = {"args": [D, case.sizes["n_heads"], case.sizes["F"]], "kwargs": {}}
    opts = CallOptions(construct=construct, state=state, to={"dtype": "float64"}, isolate=[])
    reply = sub.call("DecoderBlock", [x], dict(case.kwargs), opts)
    got = reply.value if reply.ok else None
    with torch.no_grad():
        want = blk(x, case.kwargs.get("pad_mask"))[0]
    if not isinstance(got, (tuple, list)) or not got or not isinstance(got[0], torch.Tensor):
        return Msg("cause_tb_lm_your_block")
    if tuple(got[0].shape) != tuple(want.shape) or not compare.matches(got[0], want, cfg):
        return Msg("cause_tb_lm_your_block")
    return None


def hints(sub, cfg, case):
    def logits(g, e):
        return common.first_match(g, alternatives(case), cfg) or _parts_cause(sub, cfg, case)

    return {"logits": logits}


def test_parameters(sub, cfg):
    """embed, blocks.{i}.*, ln_f, head (no bias): exactly the contract's names (a learned position table is not one)."""
    V, D, h, F, L = 11, 8, 2, 12, 2
    want = {"embed.weight": (V, D)}
    for i in range(L):
        for p in ("ln1", "ln2"):
            want[f"blocks.{i}.{p}.weight"], want[f"blocks.{i}.{p}.bias"] = (D,), (D,)
        for p in ("q_proj", "k_proj", "v_proj", "out_proj"):
            want[f"blocks.{i}.attn.{p}.weight"], want[f"blocks.{i}.attn.{p}.bias"] = (D, D), (D,)
        want[f"blocks.{i}.ffn.linear1.weight"], want[f"blocks.{i}.ffn.linear1.bias"] = (F, D), (F,)
        want[f"blocks.{i}.ffn.linear2.weight"], want[f"blocks.{i}.ffn.linear2.bias"] = (D, F), (D,)
    want.update({"ln_f.weight": (D,), "ln_f.bias": (D,), "head.weight": (V, D)})
    common.check_parameters(sub, NAME, {"args": [V, D, h, F, L]}, want, f"TransformerLM({V}, {D}, {h}, {F}, {L})")


def test_shapes_and_values(sub, cfg):
    """Several sizes and depths, with and without a padding mask."""
    cases = [Case(*size, seed=100 + 10 * k) for k, size in enumerate(SIZES)]
    cases += [Case(*SIZES[0], seed=150, padded=True), Case(*SIZES[2], seed=160, padded=True)]
    for case in cases:
        common.values(sub, cfg, case, hints(sub, cfg, case))


def test_float32(sub, cfg):
    """A float32 model keeps float32 and matches the reference within float32's tolerance."""
    case = Case(*SIZES[0], seed=200, padded=True)
    got, what, _ = common.runs(sub, case, torch.float32, hints=hints(sub, cfg, case))
    value_checks.check_outputs(
        got, case.expected(torch.float32), what, cfg, torch.float32, "cpu", hints(sub, cfg, case)
    )


def test_causal_structure(sub, cfg):
    """Changing the token at t + 1 (and after) changes no logit at t or before."""
    case = Case(*SIZES[0], seed=300)
    got, what, _ = common.runs(sub, case)
    V = case.sizes["V"]
    for s in (1, 4):
        tokens = case.args[0].clone()
        tokens[:, s:] = (
            tokens[:, s:] + 1 + torch.randint(V - 1, tokens[:, s:].shape, generator=tensors.gen(301 + s))
        ) % V
        again, _, _ = common.runs(sub, case, args=[tokens])
        value_checks.assert_close(
            again["logits"][:, :s],
            got["logits"][:, :s],
            t("tb_logits_after_future_change", what=what, s=s),
            cfg,
            hint=lambda g, e: hints(sub, cfg, case)["logits"](got["logits"], None),
        )


def test_padding_changes_nothing(sub, cfg):
    """Other tokens at padded positions change no logit at a real position."""
    case = Case(*SIZES[0], seed=400, padded=True)
    pad = case.kwargs["pad_mask"]
    got, what, _ = common.runs(sub, case)
    V = case.sizes["V"]
    tokens = case.args[0].clone()
    tokens[~pad] = (tokens[~pad] + 1 + torch.randint(V - 1, (int((~pad).sum()),), generator=tensors.gen(401))) % V
    again, _, _ = common.runs(sub, case, args=[tokens])
    value_checks.assert_close(
        again["logits"][pad],
        got["logits"][pad],
        t("tb_real_after_padded_change", what=what),
        cfg,
        hint=lambda g, e: hints(sub, cfg, case)["logits"](got["logits"], None),
    )


def test_positions_matter(sub, cfg):
    """One token repeated, and the same tokens in another order: the logits differ from
    position to position only through the encoding, as the reference's do."""
    B, T, V, D, h, F, L = SIZES[0]
    base = torch.randint(V, (T,), generator=tensors.gen(500))
    tokens = torch.stack([torch.full((T,), 3), base, base.flip(0)])  # (3, T)
    case = Case(B, T, V, D, h, F, L, seed=510, tokens=tokens)
    got, what, _ = common.runs(sub, case)
    g = got["logits"].double()
    if (g[0] - g[0, :1]).abs().max() < 1e-6:  # the reference's differ by far more: the encoding
        # which mistake leaves them alike (none added, or added along the batch): recomputed
        cause = hints(sub, cfg, case)["logits"](got["logits"], None)
        failing.fail(failing.caused(t("tb_same_logits_everywhere", what=what), cause))
    value_checks.check_outputs(got, case.expected(), what, cfg, torch.float64, "cpu", hints(sub, cfg, case))


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. every parameter (the tokens are integers)."""
    common.check_param_grads(sub, cfg, Case(*SIZES[0], seed=600, padded=True), 610, grad_inputs=False)


def test_dtype_and_device(sub, cfg, dd):
    """In the dtype it was moved to: the positional encoding too (built in the model's dtype, on its device)."""
    case = Case(*SIZES[0], seed=700, padded=True, scale=0.7)
    common.in_dtype(sub, cfg, case, dd, hints(sub, cfg, case))


@pytest.mark.property
def test_meta_device(sub, cfg):
    """On the meta device (shapes only): shows a positional encoding or a mask built on the CPU."""
    common.runs(sub, Case(*SIZES[0], seed=800, padded=True), torch.float32, "meta")
    common.runs(sub, Case(*SIZES[0], seed=810), torch.float32, "meta")


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    case = Case(*SIZES[0], seed=900, padded=True)
    common.inputs_unchanged(sub, case)


@pytest.mark.property
def test_vectorised(sub, cfg):
    """The count of torch operations does not grow with the batch or the positions (a loop over the blocks is fine)."""
    common.check_vectorised(
        sub,
        lambda B, T: Case(B, T, 11, 8, 2, 12, 2, seed=950, padded=True),
        NAME,
    )
