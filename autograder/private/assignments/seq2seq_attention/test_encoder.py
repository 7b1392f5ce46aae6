"""Hidden tests: Encoder(vocab_size, emb_dim, hidden_dim) and its forward(src,
src_lengths) -> (states (B, T, H), zeros at padding; final (B, H), the state
after each last real token).

The worker builds the student's module and loads the judge's parameters into
`embedding` and `gru` by name (the contract's names and shapes); the
yardstick is the reference module with the same parameters, in float64.
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import number, t
from autograder.private.assignments.seq2seq_attention import common
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.suites import calls, compare, counterexamples, failing, properties, tensors, value_checks

QUESTION = "encoder"
NAME = "Encoder"
OUT = ("states", "final")
# (B, T, V, E, H): all different; B == T; one row; a long one
SIZES = [(3, 5, 11, 4, 6), (4, 4, 9, 7, 5), (1, 6, 10, 3, 8), (5, 9, 12, 6, 7)]


class Case(common.LabCase):
    NAME = NAME
    OUT = OUT
    ARG_NAMES = ("src", "src_lengths")

    def __init__(self, B, T, V, E, H, seed, lengths=None, shortest=1):
        self.B, self.T, self.V, self.E, self.H = B, T, V, E, H
        self.lengths = torch.as_tensor(lengths) if lengths is not None else common.lengths_of(B, T, seed, shortest)
        self.src = common.tokens(B, T, V, self.lengths, seed + 1)
        self.state = common.random_state(ref.Encoder(V, E, H), seed + 2)
        self.args, self.kwargs = [self.src, self.lengths], {}

    def ctor(self):
        return [self.V, self.E, self.H]

    def named_sizes(self):
        return {"B": self.B, "T": self.T, "V": self.V, "E": self.E, "H": self.H}

    def at(self, sizes, seed):
        if sizes["V"] < 4:  # symbols 3 .. V - 1
            return None
        return Case(sizes["B"], sizes["T"], sizes["V"], sizes["E"], sizes["H"], seed)


def _alternatives(case, expected):
    """Outputs of the usual mistakes, computed here from the reference's own pieces."""
    m = case.reference()
    with torch.no_grad():
        all_states, h = m.gru(m.embedding(case.src))  # the GRU run over the padding too
    pad = ~tensors.lengths_mask(case.lengths, case.T)
    last = all_states[:, -1]
    return {
        "final": [(Msg("cause_lab_final_after_padding"), last), (Msg("cause_lab_final_after_padding"), h[0])],
        "states": [
            (Msg("cause_lab_states_not_zeroed"), all_states),
            (Msg("cause_lab_states_from_unpacked_gru"), all_states.masked_fill(pad[..., None], 0.0)),
        ],
    }


def hints(case, cfg):
    cache = {}

    def alt(name):
        if not cache:
            cache.update(_alternatives(case, None))
        return cache[name]

    def hint(name):
        def h(got, expected):
            for cause, want in alt(name):
                if compare.matches(got, want, cfg):
                    return cause
            return None

        return h

    return {n: hint(n) for n in OUT}


def shape_hints(case):
    def states(got, want):
        if len(got) == 3 and got[0] == want[0] and got[2] == want[2] and got[1] < want[1]:
            return Msg("cause_lab_total_length")
        return None

    def final(got, want):
        if tuple(got) == (1,) + tuple(want):
            return Msg("cause_lab_final_layer_axis")
        return None

    return {"states": states, "final": final}


def runs(sub, case, args=None, dtype=torch.float64, **opts):
    """The module returns (states, final) of the contract's shapes and dtype. Returns (got, what)."""
    args = args if args is not None else case.args
    reply = sub.call(NAME, args, options=CallOptions(**case.opts(dtype), **opts))
    what = case.what(args, dtype)
    if not reply.ok:
        cause = None
        if "sorted" in reply.error or "enforce_sorted" in reply.error:
            cause = Msg("cause_lab_enforce_sorted")
        calls.call_failed(what, reply.error, cause)
    got = calls.outputs(reply.value, what, OUT)
    sh = shape_hints(case)
    for name, shape in (("states", (case.B, case.T, case.H)), ("final", (case.B, case.H))):
        value_checks.check_meta(got[name], f"{what} -> {name}", shape, dtype, "cpu", hint=sh[name])
    value_checks.check_plausible(got, case.expected(dtype, args), what)
    return got, what, reply


def test_parameters(sub, cfg):
    """embedding (V, E) and a one-layer, one-direction nn.GRU(E, H): the names the judge loads by."""
    V, E, H = 11, 4, 6
    want = {
        "embedding.weight": (V, E),
        "gru.weight_ih_l0": (3 * H, E),
        "gru.weight_hh_l0": (3 * H, H),
        "gru.bias_ih_l0": (3 * H,),
        "gru.bias_hh_l0": (3 * H,),
    }
    common.check_parameters(sub, NAME, {"args": [V, E, H]}, want, f"Encoder({V}, {E}, {H})")


def test_shapes_and_values(sub, cfg):
    """Several sizes, unsorted lengths, length 1, and a batch whose longest row is shorter than T."""
    cases = [
        Case(*SIZES[0], seed=100),
        Case(*SIZES[1], seed=110),
        Case(*SIZES[2], seed=120),
        Case(*SIZES[3], seed=130),
        Case(3, 6, 11, 4, 6, seed=140, lengths=[4, 1, 2]),
    ]
    for case in cases:
        got, what, _ = runs(sub, case)
        expected = case.expected()
        with counterexamples.module_counterexample_on_failure(
            sub, cfg, NAME, got, expected, torch.float64, "cpu", *case.fresh()
        ):
            value_checks.check_outputs(got, expected, what, cfg, torch.float64, "cpu", hints(case, cfg))


def test_padded_states_zero(sub, cfg):
    """States at padded positions are exactly 0 (what the attention's mask relies on, and pad_packed_sequence gives)."""
    case = Case(*SIZES[3], seed=200, shortest=1)
    got, what, _ = runs(sub, case)
    pad = ~tensors.lengths_mask(case.lengths, case.T)
    leak = got["states"].double()[pad]
    if leak.numel() and leak.abs().max() != 0:
        failing.fail(
            failing.caused(
                t("lab_padded_states_nonzero", what=what, max=number(float(leak.abs().max()), ".3g")),
                Msg("cause_lab_states_not_zeroed"),
            )
        )


def test_final_is_last_real_state(sub, cfg):
    """final[b] is the state after the last real token: states[b, length - 1]."""
    case = Case(*SIZES[3], seed=300)
    got, what, _ = runs(sub, case)
    last = got["states"][torch.arange(case.B), case.lengths - 1]
    value_checks.assert_close(
        got["final"],
        last,
        t("lab_final_vs_last", what=what),
        cfg,
        hint=lambda g, e: hints(case, cfg)["final"](g, None) or Msg("cause_lab_final_after_padding"),
    )


def test_padding_changes_nothing(sub, cfg):
    """Other tokens in the padded positions change neither the states nor final."""
    case = Case(*SIZES[0], seed=400)
    got, what, _ = runs(sub, case)
    noisy = case.src.clone()
    pad = ~tensors.lengths_mask(case.lengths, case.T)
    noisy[pad] = torch.randint(3, case.V, (int(pad.sum()),), generator=tensors.gen(401))
    again, _, _ = runs(sub, case, [noisy, case.lengths])
    for name in OUT:
        value_checks.assert_close(
            again[name],
            got[name],
            t("lab_after_padding_change", what=what, name=name),
            cfg,
            hint=lambda g, e: Msg("cause_lab_gru_reads_padding"),
        )


def test_gradients(sub, cfg):
    """float64 gradients reach every parameter and match the reference's."""
    case = Case(*SIZES[0], seed=500)
    expected = case.expected()
    cot = [tensors.randn(tuple(v.shape), 510 + i) for i, v in enumerate(expected.values())]
    got, what, reply = runs(sub, case, cotangents=cot)
    common.check_param_grads(reply, case.reference(), case.state, case.args, {}, cot, cfg, what)


def test_float32(sub, cfg):
    """A float32 module keeps float32 and matches the reference within float32's tolerance."""
    case = Case(*SIZES[1], seed=600)
    got, what, _ = runs(sub, case, dtype=torch.float32)
    value_checks.check_outputs(
        got, case.expected(dtype=torch.float32), what, cfg, torch.float32, "cpu", hints(case, cfg)
    )


@pytest.mark.property
def test_inputs_unchanged(sub, cfg):
    case = Case(*SIZES[0], seed=700)
    runs(sub, case)
    properties.check_inputs_unchanged(sub, NAME, case.args, {}, **case.opts())
