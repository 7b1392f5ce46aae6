"""The decoding run of the decode_step suite: the judge's model (the reference
TransformerLM with the judge's parameters), the student's decode_step called position
by position through the provided `decode_logits` in the worker, its reply checked
here, and the reference decoder with one mistake at a time for the likely causes."""

import torch
from torch.nn import functional as F

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.assignments.efficient_attention import common
from autograder.private.solutions import efficient_attention as ref
from autograder.private.suites import calls, costs, failing, modules, tensors
from autograder.protocol import wire

DRIVER = "decode_logits"
NAME = "decode_step"


class Run:
    """One decoding case: the model's sizes, the judge's parameters (float64), the tokens."""

    def __init__(self, B, T, V, D, h, F, L, seed, scale=1.0):
        self.sizes = {"vocab_size": V, "d_model": D, "n_heads": h, "d_ff": F, "n_layers": L}
        self.state = modules.random_state(ref.TransformerLM(**self.sizes), seed, scale)
        self.tokens = torch.randint(V, (B, T), generator=tensors.gen(seed + 50))

    def model(self, dtype=torch.float64):
        return common.loaded(ref.TransformerLM(**self.sizes), self.state, dtype)

    def what(self, dtype=torch.float64):
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        return t("ea_decode_call", sizes=sizes, dtype=wire.dtype_name(dtype), shape=tuple(self.tokens.shape))

    def expected(self, dtype=torch.float64, how="ok"):
        """(logits (B, T, V), [(k, v)] per block) of the reference decoder in float64 with
        the parameters rounded to `dtype`, with one mistake (`how`, see `decode`)."""
        with torch.no_grad():
            return decode(self.model(dtype), self.tokens, how)


def decode(model, tokens, how="ok"):
    """The reference's decoding, one mistake at a time: "positions_restarted" (every step
    adds PE[0]), "one_query_masked" (the new query sees the first key only),
    "keys_before_norm" (keys and values projected from x, not ln1(x))."""
    B, T = tokens.shape
    cache, steps = None, []
    for s in range(T):
        logits, cache = _step(model, tokens[:, s], cache, how)
        steps.append(logits)
    return torch.stack(steps, dim=1), cache


def _step(model, token, cache, how):
    n = 0 if cache is None else cache[0][0].shape[-2]
    x = model.embed(token)[:, None, :]
    D = x.shape[-1]
    pos = 0 if how == "positions_restarted" else n
    x = x + ref.positional_encoding(pos + 1, D, dtype=x.dtype)[pos]
    grown = []
    for i, block in enumerate(model.blocks):
        attn = block.attn
        h = block.ln1(x)
        src = x if how == "keys_before_norm" else h
        q = ref.split_heads(attn.q_proj(h), attn.n_heads)
        k = ref.split_heads(attn.k_proj(src), attn.n_heads)
        v = ref.split_heads(attn.v_proj(src), attn.n_heads)
        if cache is not None:
            k = torch.cat([cache[i][0], k], dim=-2)
            v = torch.cat([cache[i][1], v], dim=-2)
        mask = None
        if how == "one_query_masked":
            mask = torch.ones(1, k.shape[-2], dtype=torch.bool).tril()
        heads, _ = ref.scaled_dot_product_attention(q, k, v, mask)
        x = x + attn.out_proj(ref.merge_heads(heads))
        x = x + block.ffn(block.ln2(x))
        grown.append((k, v))
    return model.head(model.ln_f(x))[:, 0], grown


MISTAKES = {
    "positions_restarted": "cause_ea_positions_restarted",
    "one_query_masked": "cause_ea_one_query_masked",
    "keys_before_norm": "cause_ea_keys_before_norm",
}


def run(sub, case, dtype=torch.float64):
    """The student's (logits, cache) from the provided driver, checked as plain data:
    logits a tensor, the cache one pair of tensors per block."""
    state = {k: v.to(dtype) for k, v in case.state.items()}
    what = case.what(dtype)
    reply = sub.call(DRIVER, [dict(case.sizes), state, case.tokens], {}, CallOptions(isolate=[]))
    if not reply.ok:
        B = case.tokens.shape[0]
        batch_axis = f"({B})" in reply.error and any(
            f"({k * B})" in reply.error for k in range(2, case.tokens.shape[1] + 1)
        )
        calls.call_failed(what, reply.error, Msg("cause_ea_cache_batch_axis") if batch_axis and B > 1 else None)
    value = reply.value
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[0], torch.Tensor)):
        failing.fail(t("ea_decode_reply", what=what))
    logits, cache = value
    L = case.sizes["n_layers"]
    if not isinstance(cache, (list, tuple)) or len(cache) != L:
        failing.fail(t("ea_cache_layers", what=what, got=len(cache) if isinstance(cache, (list, tuple)) else 0, want=L))
    pairs = []
    for i, pair in enumerate(cache):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            failing.fail(t("ea_decode_reply", what=what))
        pairs.append(
            (calls.tensor(pair[0], f"{what} -> cache[{i}][0]"), calls.tensor(pair[1], f"{what} -> cache[{i}][1]"))
        )
    return logits, pairs, what


def logits_hint(case, cfg, dtype=torch.float64):
    def h(got, expected):
        return common.first_match(got, [(Msg(key), case.expected(dtype, how)[0]) for how, key in MISTAKES.items()], cfg)

    return h


def cache_hint(case, i, j, cfg):
    def h(got, expected):
        B = case.tokens.shape[0]
        if got.dim() == 4 and got.shape[0] == B * case.tokens.shape[1] and B > 1:
            return Msg("cause_ea_cache_batch_axis")
        if got.dim() == 4 and got.shape == expected.shape:
            alt = [(Msg(key), case.expected(torch.float64, how)[1][i][j]) for how, key in MISTAKES.items()]
            return common.first_match(got, alt, cfg)
        return None

    return h


# -- the work of a step, seen by the judge ------------------------------------------------
ATTENTION = "scaled_dot_product_attention"  # the provided attention a step calls
LINEAR = "nn.Linear.forward"  # every projection, the feed-forward layers and the head


def keyed_answers(seed):
    """The judge's answers for the attention and nn.Linear (`costs.keyed`: each output turned by
    a secret orthogonal matrix, so an output that did not go through them is wrong)."""
    return {
        ATTENTION: costs.keyed(ref.scaled_dot_product_attention, seed),
        LINEAR: costs.keyed(lambda state, x: F.linear(x, state["weight"], state.get("bias")), seed + 1),
    }


def replayed(case, answers):
    """The reference decoder's logits (B, T, V) with the judge answering as in the call."""
    with costs.replaying(vars(ref), answers), torch.no_grad():
        logits, _ = ref.decode_logits(dict(case.sizes), dict(case.state), case.tokens)
    return logits
