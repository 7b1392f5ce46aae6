"""Hidden tests: GroupedQueryAttention(d_model, n_heads, n_kv_heads) and its
forward(x, cache=None) -> (output (B, T, D), (k, v) each (B, n_kv_heads, t + T, d_head)).

The worker builds the student's module and loads the judge's parameters by name
(q_proj, k_proj, v_proj, out_proj); the yardstick is the reference module with the
same parameters, in float64. Sizes cover multi-query (g = 1), groups (1 < g < h) and
multi-head (g = h), a cache of earlier positions (the reference's own keys and values)
and T = 1 after a cache (a decoding step).
"""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.assignments.efficient_attention import common
from autograder.private.solutions import efficient_attention as ref
from autograder.private.suites import calls, failing, modules, properties, tensors, value_checks
from autograder.protocol import wire

QUESTION = "grouped_query_attention"
NAME = "GroupedQueryAttention"
OUT = ("output", "keys", "values")
# (B, T, D, h, g, cached): cached positions before the T new ones
CASES = [(2, 5, 8, 4, 2, 0), (3, 4, 12, 6, 3, 0), (2, 6, 8, 4, 1, 0), (2, 3, 8, 2, 2, 0), (1, 7, 16, 4, 2, 0)]
CACHED = [(2, 3, 8, 4, 2, 4), (2, 1, 12, 6, 2, 5), (3, 2, 8, 4, 1, 3)]


class Case:
    def __init__(self, B, T, D, h, g, cached, seed, scale=1.0):
        self.ctor = [D, h, g]
        self.state = modules.random_state(ref.GroupedQueryAttention(D, h, g), seed, scale)
        self.x = tensors.randn((B, T, D), seed + 50)
        self.cache = None
        if cached:
            past = tensors.randn((B, cached, D), seed + 51)
            with torch.no_grad():
                _, self.cache = self.reference()(past)
        self.args = [self.x] if self.cache is None else [self.x, self.cache]

    def reference(self, dtype=torch.float64):
        return common.loaded(ref.GroupedQueryAttention(*self.ctor), self.state, dtype)

    def expected(self, dtype=torch.float64):
        with torch.no_grad():
            args = [a.to(dtype).double() if isinstance(a, torch.Tensor) else a for a in self.args]
            if len(args) > 1:
                args[1] = tuple(v.to(dtype).double() for v in self.cache)
            out, (k, v) = self.reference(dtype)(*args)
        return {"output": out, "keys": k, "values": v}

    def describe(self, dtype=torch.float64, device="cpu"):
        """`GroupedQueryAttention(8, 4, 2) in float64: x (2, 3, 8), a cache of 4 positions`:
        shapes, never values, in the language in force."""
        cache = "" if self.cache is None else t("ea_gqa_cache", n=self.cache[0].shape[-2])
        at = "" if str(device) == "cpu" else t("mha_on_device", device=device)
        module = f"{NAME}({', '.join(map(str, self.ctor))})"
        return t("ea_gqa_call", module=module, dtype=wire.dtype_name(dtype), at=at, x=tuple(self.x.shape), cache=cache)

    def hints(self, cfg):
        """Likely causes of a wrong output, recomputed with the reference's parameters."""

        def output(got, expected):
            return common.first_match(got, [(Msg(key), forward(self, how)) for how, key in MISTAKES.items()], cfg)

        return {"output": output}

    def shape_hints(self):
        """The likely cause of a cache of another shape: the keys kept after their repetition."""

        def repeated(got, want):
            h, g = self.ctor[1], self.ctor[2]
            if len(got) == 4 and h != g and got[1] == h and tuple(got[2:]) == tuple(want[2:]):
                return Msg("cause_ea_cache_repeated")
            return None

        return {"keys": repeated, "values": repeated}


def forward(case, how):
    """The reference's forward with one mistake: "repeat" (the heads in the wrong order),
    "not_causal", "top_left" (the mask not shifted by the cached length)."""
    m = case.reference()
    D, h, g = case.ctor
    with torch.no_grad():
        x = case.x
        q = ref.split_heads(m.q_proj(x), h)
        k = ref.split_heads(m.k_proj(x), g)
        v = ref.split_heads(m.v_proj(x), g)
        if case.cache is not None:
            k = torch.cat([case.cache[0], k], dim=-2)
            v = torch.cat([case.cache[1], v], dim=-2)
        T, T_k = x.shape[1], k.shape[-2]
        shift = 0 if how == "top_left" else T_k - T
        mask = None if how == "not_causal" else torch.ones(T, T_k, dtype=torch.bool).tril(shift)
        if how == "repeat":
            k, v = k.repeat(1, h // g, 1, 1), v.repeat(1, h // g, 1, 1)
        else:
            k, v = k.repeat_interleave(h // g, dim=1), v.repeat_interleave(h // g, dim=1)
        heads, _ = ref.scaled_dot_product_attention(q, k, v, mask)
        return m.out_proj(ref.merge_heads(heads))


MISTAKES = {
    "repeat": "cause_ea_heads_repeated",
    "not_causal": "cause_ea_gqa_not_causal",
    "top_left": "cause_ea_gqa_mask_top_left",
}


def call(sub, case, dtype=torch.float64, device="cpu"):
    """The student's outputs by name; fails with its error or a reply of another form."""
    state = tensors.as_meta(case.state) if device == "meta" else case.state
    args = tensors.to(case.args, device, dtype)
    if device == "meta":
        args = tensors.as_meta(args)
    opts = CallOptions(
        construct={"args": list(case.ctor), "kwargs": {}},
        state=state,
        to={"dtype": wire.dtype_name(dtype)},
        device=device,
    )
    what = case.describe(dtype, device)
    reply = sub.call(NAME, args, {}, opts)
    if not reply.ok:
        calls.call_failed(what, reply.error)
    value = reply.value
    ok = (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and isinstance(value[1], (list, tuple))
        and len(value[1]) == 2
    )
    if not ok:
        failing.fail(t("ea_gqa_reply", what=what))
    got = calls.outputs([value[0], *value[1]], what, list(OUT))
    return got, what


def check(sub, cfg, case, dtype=torch.float64, device="cpu"):
    got, what = call(sub, case, dtype, device)
    expected = case.expected(dtype)
    if dtype == torch.float64 or device == "meta":
        value_checks.check_outputs(got, expected, what, cfg, dtype, device, case.hints(cfg), case.shape_hints())
    return got, expected, what


def test_parameters(sub, cfg):
    D, h, g = 12, 6, 2
    want = {
        "q_proj.weight": (D, D),
        "q_proj.bias": (D,),
        "k_proj.weight": (g * D // h, D),
        "k_proj.bias": (g * D // h,),
        "v_proj.weight": (g * D // h, D),
        "v_proj.bias": (g * D // h,),
        "out_proj.weight": (D, D),
        "out_proj.bias": (D,),
    }
    what = f"{NAME}({D}, {h}, {g})"
    reply = sub.call(
        NAME, options=CallOptions(construct={"args": [D, h, g], "kwargs": {}}, to={"dtype": "float64"}, invoke=False)
    )
    if not reply.ok:
        calls.call_failed(what, reply.error)
    modules.check_parameter_table(reply, want, what, lambda: None, lambda _n, _g, _w: None, lambda _first: None)


def test_shapes_and_values(sub, cfg):
    for n, sizes in enumerate(CASES):
        check(sub, cfg, Case(*sizes, seed=10 * n))


def test_with_cache(sub, cfg):
    for n, sizes in enumerate(CACHED):
        check(sub, cfg, Case(*sizes, seed=100 + 10 * n))


def test_bad_sizes(sub, cfg):
    for ctor in ([8, 4, 3], [10, 4, 2]):
        properties.expect_value_error(sub, NAME, ctor, {}, construct={"args": ctor, "kwargs": {}}, invoke=False)


@pytest.mark.property  # a property: it earns nothing where the values are wrong
def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    case = Case(2, 3, 8, 4, 2, 2, seed=300, scale=0.5)
    got, expected, what = check(sub, cfg, case, dtype, device)
    if device == "meta" or dtype == torch.float64:
        return
    for n in OUT:
        value_checks.assert_close(got[n], expected[n], f"{what} -> {n}", cfg, dtype)
