"""The training lab's run in the grader (question `training_run`): what the judge
sends to the worker, and how it judges what comes back. Settings: grading.yml
`training_run` (one place; `run_seeds.py` here measures the thresholds there
on 10 seeds of the reference).

What the judge decides, each from plain data it made or checked itself:
- the task: the copy task with a substitution of the symbols that has no fixed
  point, drawn from the run's seed, so that copying the input to the output
  scores 0;
- the initial parameters (the reference modules' initialisation under the
  seed, float32 state dicts) and the batches (tensors): one call of the
  notebook's `run_train_steps("attention", ...)` trains the student's Encoder
  and AttentionDecoder with the student's train_step (and masked_loss) in the
  worker, under the run's own CPU budget, and sends back the trained
  parameters;
- the evaluation: greedy decoding from BOS on the judge's own sequences, sent to
  the worker only after the trained parameters came back, and the held-out loss,
  each measured through the student's own Encoder and AttentionDecoder with those
  parameters loaded (`trained.Own`: one call per encoder pass and per decoding
  step, the tokens fed back chosen here) and through the reference modules with the
  same parameters, here; the worse of the two counts (`trained.worse`; trained.py
  says why both);
- the ablation, on the reference modules alone: the same decoding with the encoder
  states replaced by zeros. A model that keeps its accuracy without them does not
  use its attention: it earns none of the run's points;
- the baseline: the reference baseline trained here on the same batches from
  the same seed (cached per settings: one run per process).

Left open (said in docs/pages/training-lab.md): a worker could send parameters it did not get
by this run's training (a correct model trained in another cell on the same batches); they
score what the student's own forward and the reference's both make of them, so the student's
classes must run them as the contract's do.
"""

import math
from dataclasses import dataclass
from functools import lru_cache

import torch

from autograder import messages
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.suites import trained
from autograder.private.suites.trained import BadState

DRIVER = "run_train_steps"


@dataclass(frozen=True)
class Settings:
    seed: int
    steps: int
    batch_size: int
    max_len: int
    n_symbols: int
    emb_dim: int
    hidden_dim: int
    attn_dim: int
    lr: float
    eval_lengths: tuple
    eval_per_length: int
    cpu_seconds: float
    eval_cpu_seconds: float  # each call of the student's modules on the judge's sequences
    min_accuracy: tuple  # ((length, accuracy), ...)
    min_gap: tuple  # ((length, gap over the baseline), ...)
    max_zeroed: float
    max_loss_ratio: float

    @property
    def vocab_size(self):
        return self.n_symbols + 3

    @property
    def sizes(self):
        return {
            "vocab_size": self.vocab_size,
            "emb_dim": self.emb_dim,
            "hidden_dim": self.hidden_dim,
            "attn_dim": self.attn_dim,
        }

    @property
    def longest(self):
        return max(self.eval_lengths)


def settings(cfg, seed=None):
    """The run's settings from grading.yml `assignments.seq2seq_attention.run` (`seed` overrides
    its seed: the bench)."""
    s = cfg.run("seq2seq_attention")
    th = s["thresholds"]
    return Settings(
        seed=int(s["seed"] if seed is None else seed),
        steps=int(s["steps"]),
        batch_size=int(s["batch_size"]),
        max_len=int(s["max_len"]),
        n_symbols=int(s["n_symbols"]),
        emb_dim=int(s["sizes"]["emb_dim"]),
        hidden_dim=int(s["sizes"]["hidden_dim"]),
        attn_dim=int(s["sizes"]["attn_dim"]),
        lr=float(s["lr"]),
        eval_lengths=tuple(int(n) for n in s["eval_lengths"]),
        eval_per_length=int(s["eval_per_length"]),
        cpu_seconds=float(s["cpu_seconds"]),
        eval_cpu_seconds=float(s["eval_cpu_seconds"]),
        min_accuracy=tuple(sorted((int(k), float(v)) for k, v in th["accuracy"].items())),
        min_gap=tuple(sorted((int(k), float(v)) for k, v in th["gap_over_baseline"].items())),
        max_zeroed=float(th["zeroed_context_at_most"]),
        max_loss_ratio=float(th["loss_ratio_at_most"]),
    )


def derangement(n, g):
    """A permutation of n symbols with no fixed point (an identity copy then scores 0)."""
    while True:
        p = torch.randperm(n, generator=g)
        if not bool((p == torch.arange(n)).any()):
            return p


@dataclass
class Task:
    settings: Settings
    mapping: torch.Tensor  # (n_symbols,) int64: symbol s is written as mapping[s]
    encoder_state: dict  # {name: float32 tensor}: the reference's initialisation under the seed
    decoder_state: dict
    batches: list  # [(src, src_lengths, tgt, tgt_lengths)] * steps

    @property
    def args(self):
        """run_train_steps' arguments (its `optimizer` keyword is "adam")."""
        return [
            "attention",
            self.settings.sizes,
            self.encoder_state,
            self.decoder_state,
            self.batches,
            self.settings.lr,
        ]


def modules(s, kind):
    V, E, H = s.vocab_size, s.emb_dim, s.hidden_dim
    if kind == "baseline":
        return ref.BaselineEncoder(V, E, H), ref.BaselineDecoder(V, E, H)
    return ref.Encoder(V, E, H), ref.AttentionDecoder(V, E, H, s.attn_dim)


def task(s):
    """The judge's task for settings `s`: the same for every submission graded with them."""
    g = torch.Generator().manual_seed(s.seed)
    mapping = derangement(s.n_symbols, g)
    torch.manual_seed(s.seed)
    enc, dec = modules(s, "attention")
    batches = [tuple(ref.make_copy_batch(s.batch_size, 1, s.max_len, s.n_symbols, g, mapping)) for _ in range(s.steps)]
    return Task(s, mapping, _detached(enc.state_dict()), _detached(dec.state_dict()), batches)


def _detached(state):
    return {n: v.detach().clone() for n, v in state.items()}


def train_here(t, kind):
    """Train the reference modules (`kind` "attention" or "baseline") on the task's batches,
    as run_train_steps does in the worker. Returns (losses, encoder, decoder)."""
    s = t.settings
    torch.manual_seed(s.seed)
    enc, dec = modules(s, kind)
    if kind == "attention":
        enc.load_state_dict(t.encoder_state)
        dec.load_state_dict(t.decoder_state)
    opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=s.lr)
    losses = [float(ref.train_step(enc, dec, opt, *b)) for b in t.batches]
    return losses, enc, dec


@lru_cache(maxsize=4)
def baseline_accuracy(s):
    """{length: accuracy} of the reference baseline trained on the task's batches (cached)."""
    t = task(s)
    _, enc, dec = train_here(t, "baseline")
    return accuracy(enc, dec, t)


def eval_batch(t, length):
    """The judge's evaluation sequences of one length (never sent to the worker)."""
    s = t.settings
    g = torch.Generator().manual_seed(s.seed * 7919 + 1000 + length)
    src, lengths, tgt, _ = ref.make_copy_batch(s.eval_per_length, length, length, s.n_symbols, g, t.mapping)
    return src, lengths, tgt[:, 1 : length + 1]  # (N, L), (N,), (N, L): the symbols to write


class ZeroedStates(torch.nn.Module):
    """An encoder whose per-position states are replaced by zeros (its final state kept):
    the ablation, what a decoder keeps without its attention's input."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, src, src_lengths):
        states, final = self.encoder(src, src_lengths)  # (N, L, H), (N, H)
        return torch.zeros_like(states), final


def decode(encoder, decoder, src, lengths, n_steps, zero_context=False):
    """The reference's greedy decoding from BOS, here: (N, n_steps) tokens."""
    return ref.greedy_decode(ZeroedStates(encoder) if zero_context else encoder, decoder, src, lengths, n_steps)[0]


def accuracy(encoder, decoder, t, zero_context=False):
    """{length: token accuracy} over the judge's evaluation sequences."""
    out = {}
    for L in t.settings.eval_lengths:
        src, lengths, want = eval_batch(t, L)
        got = decode(encoder, decoder, src, lengths, L, zero_context)
        out[L] = float((got == want).double().mean())
    return out


def checked_states(t, encoder_state, decoder_state):
    """The worker's trained parameters, each checked here (`trained.checked`: exactly the
    contract's names and shapes, floating point and finite): ({name: float32 tensor}, {...})."""
    out = []
    for prefix, module, got in zip(
        ("encoder", "decoder"), modules(t.settings, "attention"), (encoder_state, decoder_state)
    ):
        if not isinstance(got, dict):
            raise BadState("lab_run_state_kind", what=prefix)
        out.append(trained.checked(module.state_dict(), got, prefix))
    return tuple(out)


def load_trained(t, encoder_state, decoder_state):
    """The reference modules with the worker's trained parameters, each checked here."""
    enc, dec = modules(t.settings, "attention")
    e, d = checked_states(t, encoder_state, decoder_state)
    enc.load_state_dict(e)
    dec.load_state_dict(d)
    return enc, dec


def own_modules(sub, t, encoder_state, decoder_state):
    """The student's Encoder and AttentionDecoder built as run_train_steps builds them, the
    checked trained states loaded (`trained.Own`), as the calls the reference's decoding makes:
    encoder(src, src_lengths) -> (states, state) and decoder(token, state, states, mask) ->
    (float32 logits checked here, state, None). What the student's modules pass each other
    (states, state) goes back to them as it came; the judge reads their logits alone."""
    s = t.settings
    V, E, H = s.vocab_size, s.emb_dim, s.hidden_dim
    enc = trained.Own(sub, "Encoder", (V, E, H), {}, encoder_state, s.eval_cpu_seconds)
    dec = trained.Own(sub, "AttentionDecoder", (V, E, H, s.attn_dim), {}, decoder_state, s.eval_cpu_seconds)

    def parts(value, target, names):
        if not (isinstance(value, (list, tuple)) and len(value) == len(names)):
            raise BadState("run_own_reply", target=target, got=type(value).__name__, expected=f"({', '.join(names)})")
        return value

    def encoder(src, src_lengths):
        return tuple(parts(enc(src, src_lengths), "Encoder", ("encoder_states", "state")))

    def decoder(token, state, states, mask):
        logits, new_state, _ = parts(
            dec(token, state, states, mask), "AttentionDecoder", ("logits", "state", "weights")
        )
        return trained.scores(logits, (token.shape[0], V), "AttentionDecoder"), new_state, None

    return encoder, decoder


def held_out_loss(encoder, decoder, t):
    """The teacher-forced masked loss, computed here with the reference's forward pass, on
    the judge's own batch of sequences of 1 .. max_len symbols (never sent to the worker)."""
    s = t.settings
    g = torch.Generator().manual_seed(s.seed * 7919 + 999)
    src, src_lengths, tgt, tgt_lengths = ref.make_copy_batch(s.eval_per_length, 1, s.max_len, s.n_symbols, g, t.mapping)
    with torch.no_grad():
        states, state = encoder(src, src_lengths)  # (N, T, H), (N, H)
        mask = ref.length_mask(src_lengths, src.shape[1])  # (N, T)
        logits = []
        for i in range(tgt.shape[1] - 1):
            step, state, _ = decoder(tgt[:, i], state, states, mask)  # (N, V)
            logits.append(step)
        logits = torch.stack(logits, 1)  # (N, T + 1, V)
        real = ref.length_mask(tgt_lengths - 1, tgt.shape[1] - 1)  # (N, T + 1)
        return float(ref.masked_loss(logits, tgt[:, 1:], real))


def loss_ratio(t, encoder, decoder):
    """The held-out loss of the trained parameters over that of the initial ones."""
    enc0, dec0 = modules(t.settings, "attention")
    enc0.load_state_dict(t.encoder_state)
    dec0.load_state_dict(t.decoder_state)
    before = held_out_loss(enc0, dec0, t)
    return held_out_loss(encoder, decoder, t) / before if before > 0 else math.inf, before


@dataclass
class Outcome:
    """What the judge measured of one submission's run (plain numbers; the worker's
    own losses are only shown)."""

    losses: list
    loss_before: float  # the held-out loss of the initial parameters (the reference's forward)
    loss_ratio: float  # ... of the trained ones over it: the worse of the two forwards'
    accuracy: dict  # {length: accuracy} of the trained parameters: the worse of the two forwards'
    zeroed: dict  # the reference's, with the encoder states zeroed
    baseline: dict
    own: dict = None  # {"accuracy": {length: ...}, "loss_ratio"}: the student's modules', when run
    contract: dict = None  # the same through the reference modules

    def gap(self, length):
        return self.accuracy[length] - self.baseline[length]

    def own_cause(self, measure, length=None, higher_is_better=True):
        """The cause to name when the student's own modules made this measure (at `length`)
        worse than the reference's forward of the same parameters (or None)."""
        if not self.own:
            return None
        own, contract = self.own[measure], self.contract[measure]
        if length is not None:
            own, contract = own[length], contract[length]
        return trained.own_cause(messages.t("run_own_seq2seq_model"), own, contract, higher_is_better)


def outcome(t, losses, encoder_state, decoder_state, sub=None):
    """The Outcome of the worker's reply (losses, trained states), the student's own modules
    run on the judge's sequences when `sub` is given (the grader; the kit's tests judge the
    reference's forward alone); BadState when a state is not the contract's or the student's
    modules fail on it."""
    encoder_state, decoder_state = checked_states(t, encoder_state, decoder_state)
    enc, dec = load_trained(t, encoder_state, decoder_state)
    ratio, before = loss_ratio(t, enc, dec)
    contract = {"accuracy": accuracy(enc, dec, t), "loss_ratio": ratio}
    mine = None
    if sub is not None:
        own_enc, own_dec = own_modules(sub, t, encoder_state, decoder_state)
        own_ratio = held_out_loss(own_enc, own_dec, t) / before if before > 0 else math.inf
        mine = {"accuracy": accuracy(own_enc, own_dec, t), "loss_ratio": own_ratio}
    counted = trained.counted(mine, contract)
    return Outcome(
        list(losses),
        before,
        counted["loss_ratio"],
        counted["accuracy"],
        accuracy(enc, dec, t, zero_context=True),
        baseline_accuracy(t.settings),
        mine,
        contract if mine is not None else None,
    )
