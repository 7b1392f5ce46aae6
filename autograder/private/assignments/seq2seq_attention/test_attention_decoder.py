"""Hidden tests: AttentionDecoder(vocab_size, emb_dim, hidden_dim, attn_dim) and one
step, forward(prev_token, state, encoder_states, mask) -> (logits (B, V),
new_state (B, H), weights (B, T)).

The worker builds the student's module and loads the judge's parameters by
name (embedding, W_a, U_a, v_a, gru, out); the yardstick is the reference
module with the same parameters, in float64. The query of the attention is the
state BEFORE the step (Bahdanau), so the weights do not depend on prev_token.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.assignments.seq2seq_attention import common
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.solutions.classic_attention import additive_attention
from autograder.private.suites import (
    calls,
    causes,
    compare,
    counterexamples,
    failing,
    grads,
    properties,
    tensors,
    value_checks,
)

QUESTION = "attention_decoder"
NAME = "AttentionDecoder"
OUT = ("logits", "new_state", "weights")
# (B, T, V, E, H, A): all different; B == T; one row
SIZES = [(3, 5, 11, 4, 6, 7), (4, 4, 9, 5, 3, 6), (1, 6, 10, 3, 8, 4), (5, 7, 12, 6, 5, 9)]


class Case(common.LabCase):
    NAME = NAME
    OUT = OUT
    ARG_NAMES = ("prev_token", "state", "encoder_states", "mask")

    def __init__(self, B, T, V, E, H, A, seed, lengths=None):
        self.B, self.T, self.V, self.E, self.H, self.A = B, T, V, E, H, A
        self.lengths = torch.as_tensor(lengths) if lengths is not None else common.lengths_of(B, T, seed)
        self.mask = tensors.lengths_mask(self.lengths, T)  # (B, T)
        self.prev = torch.randint(1, V, (B,), generator=tensors.gen(seed + 1))
        self.s = tensors.randn((B, H), seed + 2)
        self.memory = tensors.randn((B, T, H), seed + 3).masked_fill(~self.mask[..., None], 0.0)  # zeros at padding
        self.state = common.random_state(ref.AttentionDecoder(V, E, H, A), seed + 4)
        self.args, self.kwargs = [self.prev, self.s, self.memory, self.mask], {}

    def ctor(self):
        return [self.V, self.E, self.H, self.A]

    def named_sizes(self):
        return {"B": self.B, "T": self.T, "V": self.V, "E": self.E, "H": self.H, "A": self.A}

    def at(self, sizes, seed):
        if sizes["V"] < 2:  # prev_token in 1 .. V - 1
            return None
        return Case(sizes["B"], sizes["T"], sizes["V"], sizes["E"], sizes["H"], sizes["A"], seed)


def _manual(
    case,
    query="before",
    mask="ok",
    swap=False,
    gru_in="context",
    out_in="state_context",
    softmax=False,
    state_out="new",
    log_probs=False,
):
    """The step written out here, with one mistake at a time: (logits, new_state, weights)."""
    st = case.state
    prev, s, memory, m = case.args
    emb = st["embedding.weight"][prev]
    W, U = (st["U_a"], st["W_a"]) if swap else (st["W_a"], st["U_a"])

    def gru(x, h):
        cell = torch.nn.GRUCell(x.shape[-1], case.H).double()
        cell.load_state_dict({k[4:]: v for k, v in st.items() if k.startswith("gru.")})
        with torch.no_grad():
            return cell(x, h)

    use_mask = None if mask == "ignored" else (~m if mask == "inverted" else m)
    if query == "after":  # Luong's order: the GRU first (without the context), then attend with its new state
        h = gru(torch.cat([emb, torch.zeros_like(s)], -1), s)
        context, w = additive_attention(h, memory, W, U, st["v_a"], use_mask)
    else:
        context, w = additive_attention(s, memory, W, U, st["v_a"], use_mask)
        x = {
            "context": torch.cat([emb, context], -1),
            "reversed": torch.cat([context, emb], -1),
            "state": torch.cat([emb, s], -1),
        }[gru_in]
        h = gru(x, s)
    feats = {"state_context": torch.cat([h, context], -1), "context_state": torch.cat([context, h], -1)}[out_in]
    logits = feats @ st["out.weight"].T + st["out.bias"]
    if softmax:
        logits = torch.softmax(logits, -1)
    if log_probs:
        logits = torch.log_softmax(logits, -1)
    return logits, (s if state_out == "old" else h), w


def _alternatives(case):
    alts = [
        (Msg("cause_lab_query_after_step"), _manual(case, query="after")),
        (Msg("cause_lab_attention_swapped"), _manual(case, swap=True)),
        (Msg("cause_lab_gru_input_order"), _manual(case, gru_in="reversed")),
        (Msg("cause_lab_gru_fed_state"), _manual(case, gru_in="state")),
        (Msg("cause_lab_out_input_order"), _manual(case, out_in="context_state")),
        (Msg("cause_lab_logits_softmaxed"), _manual(case, softmax=True)),
        (Msg("cause_lab_logits_log_probs"), _manual(case, log_probs=True)),
        (Msg("cause_lab_old_state"), _manual(case, state_out="old")),
    ]
    if not bool(case.mask.all()):
        alts += [
            (causes.mask_ignored(), _manual(case, mask="ignored")),
            (Msg("cause_polarity_may_attend"), _manual(case, mask="inverted")),
        ]
    return alts


def hints(case, cfg):
    cache = []

    def alts():
        if not cache:
            cache.extend(_alternatives(case))
        return cache

    def hint(i, name):
        def h(got, expected):
            for cause, outs in alts():
                if compare.matches(got, outs[i], cfg):
                    return cause
            if name == "weights":
                return causes.weights_hint(got, expected, case.mask)
            return None

        return h

    return {n: hint(i, n) for i, n in enumerate(OUT)}


def runs(sub, case, args=None, dtype=torch.float64, **opts):
    """The step returns (logits, new_state, weights) of the contract's shapes and dtype. Returns (got, what, reply)."""
    args = tensors.to(args if args is not None else case.args, "cpu", dtype)
    reply = sub.call(NAME, args, options=CallOptions(**case.opts(dtype), **opts))
    what = case.what(args, dtype)
    if not reply.ok:
        calls.call_failed(what, reply.error)
    got = calls.outputs(reply.value, what, OUT)
    for name, shape in (("logits", (case.B, case.V)), ("new_state", (case.B, case.H)), ("weights", (case.B, case.T))):
        value_checks.check_meta(got[name], f"{what} -> {name}", shape, dtype, "cpu", hint=causes.shape_cause)
    value_checks.check_plausible(got, case.expected(dtype, args), what)
    return got, what, reply


def test_parameters(sub, cfg):
    """embedding, W_a, U_a, v_a, gru (GRUCell fed [embedding; context]) and out (on [new state; context])."""
    V, E, H, A = 11, 4, 6, 7
    want = {
        "embedding.weight": (V, E),
        "W_a": (A, H),
        "U_a": (A, H),
        "v_a": (A,),
        "gru.weight_ih": (3 * H, E + H),
        "gru.weight_hh": (3 * H, H),
        "gru.bias_ih": (3 * H,),
        "gru.bias_hh": (3 * H,),
        "out.weight": (V, 2 * H),
        "out.bias": (V,),
    }
    common.check_parameters(sub, NAME, {"args": [V, E, H, A]}, want, f"AttentionDecoder({V}, {E}, {H}, {A})")


def test_shapes_and_values(sub, cfg):
    """One step against the reference: several sizes, padded and unpadded batches."""
    cases = [
        Case(*SIZES[0], seed=100),
        Case(*SIZES[1], seed=110),
        Case(*SIZES[2], seed=120),
        Case(*SIZES[3], seed=130),
        Case(*SIZES[0], seed=140, lengths=[5, 1, 3]),
    ]
    for case in cases:
        got, what, _ = runs(sub, case)
        expected = case.expected()
        with counterexamples.module_counterexample_on_failure(
            sub, cfg, NAME, got, expected, torch.float64, "cpu", *case.fresh()
        ):
            value_checks.check_outputs(got, expected, what, cfg, torch.float64, "cpu", hints(case, cfg))


def test_padded_positions_get_zero_attention(sub, cfg):
    """Padded source positions get weight exactly 0, and changing the encoder states there changes nothing."""
    case = Case(*SIZES[3], seed=200, lengths=[7, 2, 5, 1, 4])
    got, what, _ = runs(sub, case)
    leak = got["weights"].double()[~case.mask]
    if leak.abs().max() != 0:
        failing.fail(
            failing.caused(
                t("lab_padded_attention", what=what, max=number(float(leak.abs().max()), ".3g")),
                hints(case, cfg)["weights"](got["weights"], case.expected()["weights"]),
            )
        )
    memory = case.memory + tensors.randn(case.memory.shape, 201, scale=3.0).masked_fill(case.mask[..., None], 0.0)
    again, _, _ = runs(sub, case, [case.prev, case.s, memory, case.mask])
    for name in OUT:
        value_checks.assert_close(
            again[name],
            got[name],
            t("lab_after_padded_states_change", what=what, name=name),
            cfg,
        )


def test_query_is_state_before_step(sub, cfg):
    """Bahdanau's query is the state the step receives: the weights do not depend on
    prev_token (they would if the new state were the query)."""
    case = Case(*SIZES[0], seed=300)
    got, what, _ = runs(sub, case)
    other = (case.prev + 1 + torch.arange(case.B)) % (case.V - 1) + 1
    again, _, _ = runs(sub, case, [other, case.s, case.memory, case.mask])
    value_checks.assert_close(
        again["weights"],
        got["weights"],
        t("lab_weights_after_token_change", what=what),
        cfg,
        hint=lambda g, e: Msg("cause_lab_query_after_step"),
    )
    value_checks.assert_close(
        got["weights"], case.expected()["weights"], f"{what} -> weights", cfg, hint=hints(case, cfg)["weights"]
    )


def test_gradients(sub, cfg):
    """float64 gradients w.r.t. state, encoder_states and every parameter."""
    case = Case(*SIZES[0], seed=400)
    ref_fn = lambda *a: case.reference()(*a)  # noqa: E731
    reply, _ = grads.check_grads(
        sub,
        cfg,
        NAME,
        case.args,
        {},
        ref_fn,
        OUT,
        410,
        grad_args=[1, 2],
        hints=hints(case, cfg),
        fresh=case.fresh(),
        **case.opts(),
    )
    s = case.s.clone().requires_grad_(True)
    memory = case.memory.clone().requires_grad_(True)
    cot = [tensors.randn(tuple(v.shape), 410 + k) for k, v in enumerate(case.expected().values())]
    common.check_param_grads(
        reply, case.reference(), case.state, [case.prev, s, memory, case.mask], {}, cot, cfg, case.what()
    )


def test_float32(sub, cfg):
    """A float32 module keeps float32 and matches the reference within float32's tolerance."""
    case = Case(*SIZES[1], seed=500)
    got, what, _ = runs(sub, case, dtype=torch.float32)
    expected = case.expected(dtype=torch.float32)
    with counterexamples.module_counterexample_on_failure(
        sub, cfg, NAME, got, expected, torch.float32, "cpu", *case.fresh()
    ):
        value_checks.check_outputs(got, expected, what, cfg, torch.float32, "cpu", hints(case, cfg))


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    case = Case(*SIZES[0], seed=600)
    runs(sub, case)
    properties.check_inputs_unchanged(sub, NAME, case.args, {}, **case.opts())


@pytest.mark.property
def test_from_scratch(sub, cfg, cells, provided):
    case = Case(*SIZES[0], seed=700)
    runs(sub, case)
    properties.check_from_scratch(sub, cells, provided, NAME, case.args, {}, **case.opts())
