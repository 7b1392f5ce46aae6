"""Stand-ins for graded classes (issue 24): while the judge grades TransformerLM, the
DecoderBlock and FeedForward it builds and the positional_encoding it calls are the
judge's. The judge's answers on their own (construct, forward, backward; hostile
messages answered with the student's error), then through a real worker."""

import inspect
import types
from pathlib import Path

import pytest
import torch

from autograder import config
from autograder.judge import provided_source
from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import CallOptions, Remote
from autograder.judge.stand_in import MAX_CALLBACKS, StandIn, graded_classes
from autograder.private.solutions import transformer_block as ref
from conftest import limits

QUESTIONS = config.load().questions("transformer_block")
CTOR = {"args": [8, 2, 12], "kwargs": {}}


def _cfg(isolate=True, reply_bytes=1 << 25):
    """The settings the stand-ins read: grading.yml's transformer_block questions, the isolation switch, the reply limit."""
    return types.SimpleNamespace(
        scoring={"isolate_dependencies": isolate}, limits={"reply_bytes": reply_bytes}, questions=lambda a: QUESTIONS
    )


@pytest.fixture
def judge():
    s = StandIn("transformer_block", _cfg())
    return s, s.allowed("TransformerLM")


def _construct(s, allowed, name="DecoderBlock", args=(8, 2, 12), kwargs=None, count=1):
    msg = {"op": "callback", "name": name, "kind": "construct", "args": list(args), "kwargs": kwargs or {}}
    return s.answer("TransformerLM", allowed, msg, count)


def _forward(params, x, pad_mask=None, **extra):
    kwargs = {} if pad_mask is None else {"pad_mask": pad_mask}
    msg = {"op": "callback", "name": "DecoderBlock", "kind": "forward", "construct": CTOR, "params": params}
    return dict(msg, args=[x], kwargs=kwargs, **extra)


def _state(seed=0):
    g = torch.Generator().manual_seed(seed)
    return {
        n: torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.3
        for n, p in ref.DecoderBlock(8, 2, 12).named_parameters()
    }


def test_the_graded_classes_are_stood_in_for_the_others_only_when_listed_and_switched_on():
    assert set(graded_classes("transformer_block")) == {"FeedForward", "DecoderBlock", "TransformerLM"}
    s = StandIn("transformer_block", _cfg())
    assert s.allowed("TransformerLM") == ["DecoderBlock", "FeedForward", "next_token_loss", "positional_encoding"]
    assert "DecoderBlock" not in s.allowed("DecoderBlock")
    assert StandIn("transformer_block", _cfg(isolate=False)).allowed("TransformerLM") == []
    assert "MultiHeadAttention" not in graded_classes("transformer_block")  # provided, never stood in for


def test_construct_answers_the_references_parameter_names_shapes_and_initial_values(judge):
    s, allowed = judge
    reply = _construct(s, allowed)
    assert reply["ok"], reply
    want = ref.DecoderBlock(8, 2, 12)
    assert list(reply["params"]) == [n for n, _ in want.named_parameters()]
    assert all(
        reply["params"][n].shape == p.shape and reply["params"][n].dtype == torch.float32
        for n, p in want.named_parameters()
    )
    assert list(reply["parts"]) == [p for p, _ in want.named_modules()]
    linear1 = {"type": "Linear", "torch": True, "attrs": {"in_features": 8, "out_features": 12}}
    assert reply["parts"]["ffn.linear1"] == linear1
    assert reply["parts"]["ffn"]["torch"] is False and reply["parts"]["attn"]["torch"] is False  # the kit's classes
    before = torch.random.get_rng_state()
    again = _construct(s, allowed)
    assert torch.equal(torch.random.get_rng_state(), before)  # the judge's random state is left alone
    assert all(torch.equal(reply["params"][n], again["params"][n]) for n in reply["params"])  # seeded


def test_forward_and_backward_are_the_references_with_the_parameters_sent(judge):
    s, allowed = judge
    state = _state()
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    pad = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [0, 0, 1, 1, 1]], dtype=torch.bool)
    m = ref.DecoderBlock(8, 2, 12).double()
    m.load_state_dict(state)
    got = s.answer("TransformerLM", allowed, _forward(state, x, pad), 1)
    assert got["ok"], got
    want = m(x, pad)
    assert all(torch.allclose(g, w) for g, w in zip(got["value"], want))
    cot = [torch.randn(3, 5, 8, dtype=torch.float64), torch.randn(3, 2, 5, 5, dtype=torch.float64)]
    back = s.answer("TransformerLM", allowed, _forward(state, x, pad, grad_outputs=cot), 2)
    assert back["ok"], back
    xx = x.clone().requires_grad_(True)
    out = m(xx, pad)
    names = list(state)
    r = torch.autograd.grad(out, [xx, *(m.get_parameter(n) for n in names)], cot)
    assert back["grads"][0] is not None and torch.allclose(back["grads"][0], r[0])
    assert back["grads"][1] is None  # the mask is not floating
    assert all(torch.allclose(back["param_grads"][n], g) for n, g in zip(names, r[1:]))
    # a submodule: the reference's, with the parameters under its path
    sub = {n.removeprefix("ffn."): v for n, v in state.items() if n.startswith("ffn.")}
    part = s.answer("TransformerLM", allowed, dict(_forward(sub, x), path="ffn"), 4)
    assert part["ok"] and torch.allclose(part["value"], m.ffn(x)), part
    for path in ("ffn.linear3", "..", 3):
        assert (
            "answers no such call" in s.answer("TransformerLM", allowed, dict(_forward(sub, x), path=path), 5)["error"]
        )
    assert (
        "linear1.weight is not one of the module's (weight, bias)"
        in s.answer("TransformerLM", allowed, dict(_forward(sub, x), path="ffn.linear1"), 5)["error"]
    )
    # in the parameters' dtype
    half = s.answer("TransformerLM", allowed, _forward({n: v.float() for n, v in state.items()}, x.float()), 3)
    assert half["ok"] and half["value"][0].dtype == torch.float32


def test_a_positional_encoding_asked_on_a_device_and_in_a_dtype(judge):
    s, allowed = judge
    for device, dtype in ((torch.device("cpu"), torch.float16), (torch.device("meta"), torch.float32)):
        msg = {
            "op": "callback",
            "name": "positional_encoding",
            "args": [5, 8],
            "kwargs": {"device": device, "dtype": dtype},
        }
        reply = s.answer("TransformerLM", allowed, msg, 1)
        assert reply["ok"] and reply["value"].dtype == dtype and reply["value"].device.type == device.type, reply
    msg = {
        "op": "callback",
        "name": "positional_encoding",
        "args": [10**6, 10**4],
        "kwargs": {"device": torch.device("cpu")},
    }
    assert "over the" in s.answer("TransformerLM", allowed, msg, 1)["error"]  # sized on the meta device first


def _error(reply):
    assert not reply["ok"] and reply["error"].startswith("DecoderBlock (answered by the grader): "), reply
    return reply["error"]


@pytest.mark.parametrize(
    "args,why",
    [
        ([torch.ones(2), 2, 12], "plain arguments"),
        ([lambda: 1, 2, 12], "plain arguments"),
        ([[8, torch.ones(1)], 2, 12], "plain arguments"),
        ([10**30, 2, 12], "Error"),
        ([-8, 2, 12], "Error"),
        ([100_000, 2, 100_000], "over the"),
        ([8, 3, 12], "Error"),  # 3 heads do not divide 8: the reference says so
    ],
)
def test_a_construction_the_judge_will_not_make_is_the_students_error(judge, args, why):
    s, allowed = judge
    assert why in _error(_construct(s, allowed, args=args))


def test_parameters_sent_back_with_wrong_names_or_shapes_are_the_students_error(judge):
    s, allowed = judge
    state, x = _state(), torch.randn(2, 3, 8, dtype=torch.float64)
    shape = dict(state, **{"ln1.weight": torch.ones(9, dtype=torch.float64)})
    assert "has shape (9,), expected (8,)" in _error(s.answer("TransformerLM", allowed, _forward(shape, x), 1))
    missing = {k: v for k, v in state.items() if k != "attn.q_proj.bias"}
    assert "attn.q_proj.bias is missing" in _error(s.answer("TransformerLM", allowed, _forward(missing, x), 1))
    extra = dict(state, **{"pos.weight": torch.ones(8, dtype=torch.float64)})
    assert "pos.weight is not one of the module's" in _error(s.answer("TransformerLM", allowed, _forward(extra, x), 1))
    integer = dict(state, **{"ln1.weight": torch.ones(8, dtype=torch.long)})
    assert "not a floating-point" in _error(s.answer("TransformerLM", allowed, _forward(integer, x), 1))
    for params in (None, [1, 2], "x"):
        assert "answers no such call" in _error(s.answer("TransformerLM", allowed, _forward(params, x), 1))
    other = _forward(state, x)
    other["construct"] = {"args": [8, 2, 13], "kwargs": {}}  # arguments that build other shapes
    assert "expected (13, 8)" in _error(s.answer("TransformerLM", allowed, other, 1))
    other["construct"] = "DecoderBlock(8, 2, 12)"
    assert "answers no such call" in _error(s.answer("TransformerLM", allowed, other, 1))
    huge = _forward(state, torch.zeros(1, 3000, 8, dtype=torch.float64))  # weights (1, 2, 3000, 3000): 144 MB
    assert "over the" in _error(s.answer("TransformerLM", allowed, huge, 1))
    wrong = _forward(state, x, grad_outputs=[torch.ones(2, 3, 8, dtype=torch.float64)])  # one cotangent for two outputs
    assert "different number of outputs" in _error(s.answer("TransformerLM", allowed, wrong, 1))


def test_messages_of_the_wrong_kind_a_flood_and_the_graded_target_itself_are_refused(judge):
    s, allowed = judge
    assert "answers no such call" in _error(
        s.answer("TransformerLM", allowed, {"name": "DecoderBlock", "args": [8, 2, 12], "kwargs": {}}, 1)
    )
    bad = {"name": "DecoderBlock", "kind": "pickle", "args": [], "kwargs": {}}
    assert "answers no such call" in _error(s.answer("TransformerLM", allowed, bad, 1))
    fn = {"name": "positional_encoding", "kind": "construct", "args": [5, 8], "kwargs": {}}
    assert "answers no such call" in s.answer("TransformerLM", allowed, fn, 1)["error"]
    own = {"name": "TransformerLM", "kind": "construct", "args": [11, 8, 2, 12, 1], "kwargs": {}}
    assert "answers no such call" in s.answer("TransformerLM", allowed, own, 1)["error"]
    assert "more than 256" in _error(_construct(s, allowed, count=MAX_CALLBACKS + 1))


# -- through a real worker ----------------------------------------------------------------------
CODE = (
    inspect.getsource(ref.positional_encoding)
    + "\n"
    + inspect.getsource(ref.TransformerLM)
    + '''

class FeedForward(nn.Module):  # wrong: no activation
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.linear1(x))


class DecoderBlock(nn.Module):  # wrong: post-norm
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, pad_mask=None):
        T = x.shape[1]
        mask = causal_mask(T, device=x.device)
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        a, w = self.attn(x, x, x, mask)
        x = self.ln1(x + a)
        return self.ln2(x + self.ffn(x)), w


def flood_blocks(n):
    return [DecoderBlock(8, 2, 12) for _ in range(n)]


def block_with_a_tensor(x):
    return DecoderBlock(torch.tensor(8), 2, 12)


def tampered(x):
    block = DecoderBlock(8, 2, 12)
    block.ln1.weight = nn.Parameter(torch.ones(9))
    return block(x)


def block_parts(x):
    """A block's submodules called by the student's code (minGPT's style): the judge's too."""
    block = DecoderBlock(8, 2, 12).double()
    h = block.ln1(x)
    attended, weights = block.attn(h, h, h, None)
    hidden = block.ffn.linear1(h)
    linear = isinstance(block.ffn.linear2, torch.nn.Linear) and isinstance(block.ln1, torch.nn.LayerNorm)
    return attended, block.ffn(h), hidden, block.ffn.linear1.out_features, type(block.ffn.linear2).__name__, linear


def train_lm(tokens, steps):
    """A few Adam steps of the student's TransformerLM (its parts the judge's): the losses."""
    torch.manual_seed(0)
    model = TransformerLM(7, 8, 2, 12, 2).double()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        logits = model(tokens)
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 7), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
'''
)


@pytest.fixture(scope="module")
def remote(forkserver):
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, CODE, CODE)])
    judge = StandIn("transformer_block", _cfg())
    r = Remote(
        sub,
        provided_source("transformer_block"),
        limits(cpu_seconds_per_call=30, load_seconds=60),
        forkserver=forkserver,
        stand_in=judge,
    )
    yield r, judge
    r.close()


def _lm_state(V=7, D=8, h=2, F=12, L=2, seed=3):
    g = torch.Generator().manual_seed(seed)
    return {
        n: torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.3
        for n, p in ref.TransformerLM(V, D, h, F, L).named_parameters()
    }


@pytest.mark.slow
def test_the_students_lm_is_graded_with_the_judges_blocks_and_positions(remote):
    r, judge = remote
    V, D, h, F, L = 7, 8, 2, 12, 2
    state = _lm_state()
    tokens = torch.randint(V, (3, 5), generator=torch.Generator().manual_seed(1))
    pad = torch.ones(3, 5, dtype=torch.bool)
    pad[1, 3:] = False
    construct = {"args": [V, D, h, F, L], "kwargs": {}}
    # its parameters: the contract's names and shapes, moved by .to(float64)
    shape = r.call("TransformerLM", options=CallOptions(construct=construct, to={"dtype": "float64"}, invoke=False))
    assert shape.ok, shape.error
    assert {n: tuple(p["shape"]) for n, p in shape.params.items()} == {n: tuple(v.shape) for n, v in state.items()}
    assert all(p["dtype"] == "float64" for p in shape.params.values())
    # forward and gradients of every parameter: the reference's, though the student's block and feed-forward are wrong
    m = ref.TransformerLM(V, D, h, F, L).double()
    m.load_state_dict(state)
    cot = [torch.randn(3, 5, V, dtype=torch.float64)]
    opts = CallOptions(construct=construct, state=state, to={"dtype": "float64"}, cotangents=cot)
    reply = r.call("TransformerLM", [tokens], {"pad_mask": pad}, opts)
    assert reply.ok, reply.error
    want = m(tokens, pad)
    assert torch.allclose(reply.value, want)
    r_grads = torch.autograd.grad(want, list(m.parameters()), cot)
    got = reply.grads["params"]
    assert set(got) == set(state)
    assert all(torch.allclose(got[n], g) for (n, _), g in zip(m.named_parameters(), r_grads))
    assert {"DecoderBlock", "positional_encoding"} <= judge.used["TransformerLM"]
    # in float32 and on the meta device
    f32 = r.call("TransformerLM", [tokens], {}, CallOptions(construct=construct, state=state, to={"dtype": "float32"}))
    assert f32.ok and f32.value.dtype == torch.float32 and torch.allclose(f32.value.double(), m(tokens), atol=1e-4)
    meta = {n: torch.empty(v.shape, device="meta") for n, v in state.items()}
    opts = CallOptions(construct=construct, state=meta, to={"dtype": "float32"}, device="meta")
    on_meta = r.call("TransformerLM", [tokens.to("meta")], {}, opts)
    assert on_meta.ok and on_meta.value.device.type == "meta" and tuple(on_meta.value.shape) == (3, 5, V), on_meta.error
    # the student's own DecoderBlock, graded itself: its own (wrong) code, with the judge's FeedForward
    blk = _state()
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    mine = r.call("DecoderBlock", [x], {}, CallOptions(construct=CTOR, state=blk, to={"dtype": "float64"}))
    rb = ref.DecoderBlock(8, 2, 12).double()
    rb.load_state_dict(blk)
    assert mine.ok and not torch.allclose(mine.value[0], rb(x)[0])
    assert "FeedForward" in judge.used["DecoderBlock"]
    # training through the stand-ins: the loss goes down
    train = r.call("train_lm", [tokens, 8], {})
    assert train.ok and train.value[-1] < train.value[0] - 0.3, train.value or train.error


@pytest.mark.slow
def test_the_submodules_of_a_stand_in_are_the_references_too(remote):
    r, _ = remote
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    reply = r.call("block_parts", [x], {}, CallOptions(isolate=["DecoderBlock"]))
    assert reply.ok, reply.error
    attended, ffn, hidden, width, kind, of_torch = reply.value
    # the stand-in's initial parameters are the reference's built from the judge's seed
    torch.manual_seed(0)
    m = ref.DecoderBlock(8, 2, 12).double()
    h = m.ln1(x)
    assert torch.allclose(attended, m.attn(h, h, h, None)[0])
    assert torch.allclose(ffn, m.ffn(h)) and torch.allclose(hidden, m.ffn.linear1(h))
    assert (width, kind) == (12, "Linear")
    assert of_torch is True, "torch.nn's layers stood in for are instances of their class (isinstance holds)"


@pytest.mark.slow
def test_hostile_constructions_through_a_worker_are_the_students_errors(remote):
    r, _ = remote
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    flood = r.call("flood_blocks", [MAX_CALLBACKS + 5], {}, CallOptions(isolate=["DecoderBlock"]))
    assert not flood.ok and "more than 256" in flood.error, flood.error
    tensor = r.call("block_with_a_tensor", [x], {}, CallOptions(isolate=["DecoderBlock"]))
    assert not tensor.ok and "plain arguments" in tensor.error, tensor.error
    tamper = r.call("tampered", [x.float()], {}, CallOptions(isolate=["DecoderBlock"]))
    assert not tamper.ok and "ln1.weight has shape (9,), expected (8,)" in tamper.error, tamper.error
    # the worker is still fine afterwards
    assert r.call("flood_blocks", [2], {}, CallOptions(isolate=["DecoderBlock"])).ok
