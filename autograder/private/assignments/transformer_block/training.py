"""The transformer lab's run in the grader (question `training_run` of transformer_block):
what the judge sends to the worker, and how it judges what comes back. Settings:
grading.yml `transformer_run` (one place; `run_seeds.py` here measures the
thresholds there on 10 seeds of the reference, and the ablated trainings below).

What the judge decides, each from plain data it made or checked itself:
- the task: reversal of `length` random symbols out of `n_symbols` (a_1 .. a_L, SEP,
  a_L .. a_1), trained as a language model on every next token. The prompt's symbols
  are random: only a model that reads ahead can predict them, which is what makes a
  model trained without the causal mask show;
- the initial parameters (the reference TransformerLM's initialisation under the seed,
  a float32 state dict) and the batches (tensors): one call of the notebook's
  `run_train_steps(sizes, state, batches, lr)` trains the student's TransformerLM with
  the student's next_token_loss (and, inside the model, the student's
  positional_encoding, DecoderBlock and FeedForward) in the worker, under the run's
  own CPU budget, and sends back the trained parameters;
- the evaluation, on the judge's own sequences, sent to the worker only after the trained
  parameters came back: greedy accuracy of the answer decoded from the prompt alone and the
  held-out loss over the answer (trained parameters over initial ones), each measured
  through the student's own TransformerLM with the trained parameters loaded
  (`trained.Own`) and through the reference's forward pass of the same parameters, the
  worse of the two counted (`trained.worse`: see trained.py for why both); and, on the
  reference's forward alone (`ablated_logits`), the same accuracy with the positional
  encoding zeroed (a model that uses its positions falls towards chance) and teacher-forced
  accuracy on the prompt's random symbols with the causal mask removed (a model that
  learned to read the next position copies them).

Why "reads ahead" and not "nothing changes without the mask": see
docs/pages/transformer-contract.md, "The training run in the grader".
"""

import math
from dataclasses import dataclass

import torch

from autograder.private.solutions import transformer_block as ref
from autograder.private.suites import trained
from autograder.private.suites.trained import BadState

DRIVER = "run_train_steps"
SIZE_KEYS = ("d_model", "n_heads", "d_ff", "n_layers")


@dataclass(frozen=True)
class Settings:
    seed: int
    steps: int  # Adam steps, one batch each
    batch_size: int
    length: int  # symbols to reverse: sequences of 2 * length + 1 tokens
    n_symbols: int  # chance: 1 / n_symbols
    d_model: int
    n_heads: int
    d_ff: int
    n_layers: int
    lr: float
    eval_sequences: int
    cpu_seconds: float
    eval_cpu_seconds: float  # each call of the student's model on the judge's sequences
    min_accuracy: float  # greedy token accuracy of the answer, at least
    min_positions_drop: float  # accuracy minus accuracy with the positional encoding zeroed, at least
    max_reads_future: float  # without the causal mask, accuracy on the prompt's random symbols, at most
    max_loss_ratio: float  # held-out loss over the answer, trained over initial, at most

    @property
    def sizes(self):
        """TransformerLM's arguments (and run_train_steps' `sizes`)."""
        return {
            "vocab_size": self.n_symbols + 2,
            "d_model": self.d_model,
            "n_heads": self.n_heads,
            "d_ff": self.d_ff,
            "n_layers": self.n_layers,
        }

    @property
    def chance(self):
        return 1 / self.n_symbols


def settings(cfg, seed=None, **overrides):
    """The run's settings from grading.yml `assignments.transformer_block.run` (`seed` overrides
    its seed, and `overrides` any other field: the bench)."""
    s = cfg.run("transformer_block")
    th = s["thresholds"]
    out = Settings(
        seed=int(s["seed"] if seed is None else seed),
        steps=int(s["steps"]),
        batch_size=int(s["batch_size"]),
        length=int(s["length"]),
        n_symbols=int(s["n_symbols"]),
        **{k: int(s["sizes"][k]) for k in SIZE_KEYS},
        lr=float(s["lr"]),
        eval_sequences=int(s["eval_sequences"]),
        cpu_seconds=float(s["cpu_seconds"]),
        eval_cpu_seconds=float(s["eval_cpu_seconds"]),
        min_accuracy=float(th["accuracy"]),
        min_positions_drop=float(th["positions_drop"]),
        max_reads_future=float(th["reads_future_at_most"]),
        max_loss_ratio=float(th["loss_ratio_at_most"]),
    )
    return out if not overrides else Settings(**{**out.__dict__, **overrides})


@dataclass
class Task:
    settings: Settings
    state: dict  # {name: float32 tensor}: the reference's initialisation under the seed
    batches: list  # [tokens (batch_size, 2 * length + 1)] * steps

    @property
    def args(self):
        """run_train_steps' arguments."""
        return [self.settings.sizes, self.state, self.batches, self.settings.lr]


def task(s):
    """The judge's task for settings `s`: the same for every submission graded with them."""
    g = torch.Generator().manual_seed(s.seed)
    torch.manual_seed(s.seed)
    model = ref.TransformerLM(**s.sizes)
    state = {n: v.detach().clone() for n, v in model.state_dict().items()}
    batches = [ref.make_reverse_batch(s.batch_size, s.length, s.n_symbols, g) for _ in range(s.steps)]
    return Task(s, state, batches)


def load(t, state):
    """The reference model with `state` loaded, in eval mode (what the judge evaluates)."""
    model = ref.TransformerLM(**t.settings.sizes)
    model.load_state_dict(state)
    return model.eval()


# -- trainings in this process (the bench, the kit's tests) -------------------------------
def train_reference(t):
    """The worker's path with the reference's parts: (losses, state_dict)."""
    return ref.run_train_steps(t.settings.sizes, t.state, t.batches, t.settings.lr)


def train_ablated(t, positions=True, causal=True):
    """The same run with a forward pass that leaves out the positions or the causal mask
    (`ablated_logits` in training): (losses, state_dict)."""
    model = load(t, t.state).train()
    opt = torch.optim.Adam(model.parameters(), lr=t.settings.lr)
    losses = []
    for tokens in t.batches:
        loss = ref.next_token_loss(ref.ablated_logits(model, tokens, positions=positions, causal=causal), tokens)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


# -- the judge's evaluation ---------------------------------------------------------------
def eval_batch(t, salt=1000):
    """The judge's evaluation sequences (never sent to the worker): (eval_sequences, 2L + 1)."""
    s = t.settings
    g = torch.Generator().manual_seed(s.seed * 7919 + salt)
    return ref.make_reverse_batch(s.eval_sequences, s.length, s.n_symbols, g)


def forward_of(model, positions=True, causal=True):
    """The reference's forward pass of `model` (a TransformerLM), ablated as asked: tokens -> logits."""
    return lambda tokens: ref.ablated_logits(model, tokens, positions=positions, causal=causal)


@torch.no_grad()
def greedy(forward, tokens):
    """Greedy decoding of the answer from the prompt alone with `forward` (tokens -> logits):
    (N, L) tokens."""
    L = (tokens.shape[1] - 1) // 2
    seq = tokens[:, : L + 1]  # (N, L + 1): a_1 .. a_L, SEP
    for _ in range(L):
        logits = forward(seq)  # (N, T', V)
        seq = torch.cat([seq, logits[:, -1].argmax(-1, keepdim=True)], dim=1)  # (N, T' + 1)
    return seq[:, L + 1 :]  # (N, L): the answer


def answer_accuracy(forward, tokens):
    """The share of the answer's symbols greedy decoding with `forward` gets right."""
    L = (tokens.shape[1] - 1) // 2
    return float((greedy(forward, tokens) == tokens[:, L + 1 :]).double().mean())


@torch.no_grad()
def prompt_accuracy(model, tokens, causal=True):
    """Teacher-forced accuracy on the prompt's symbols after the first: they are random, so a
    model that only reads the past is at chance there (1 / n_symbols); one that reads ahead
    copies them once the mask is removed."""
    L = (tokens.shape[1] - 1) // 2
    logits = forward_of(model, causal=causal)(tokens)  # (N, 2L + 1, V)
    return float((logits[:, : L - 1].argmax(-1) == tokens[:, 1:L]).double().mean())  # made at 0 .. L - 2


@torch.no_grad()
def held_out_loss(forward, t):
    """The next-token loss over the answer alone (the prompt's symbols are random), on the
    judge's own sequences, with `forward` (tokens -> logits)."""
    tokens = eval_batch(t, salt=999)
    answer = torch.arange(tokens.shape[1]) > t.settings.length  # (2L + 1,): after SEP
    return float(ref.next_token_loss(forward(tokens), tokens, answer.expand_as(tokens)))


def own_forward(sub, t, state):
    """The student's TransformerLM built as the run builds it (`TransformerLM(**sizes)`), the
    checked trained `state` loaded, as a forward (tokens -> float32 logits, checked here)."""
    s = t.settings
    model = trained.Own(sub, "TransformerLM", (), s.sizes, state, s.eval_cpu_seconds)
    return lambda tokens: trained.scores(model(tokens), (*tokens.shape, s.sizes["vocab_size"]), "TransformerLM")


def checked_state(t, state):
    """The worker's trained parameters, each checked here (`trained.checked`: exactly the
    contract's names and shapes, floating point and finite): {name: float32 tensor}."""
    if not isinstance(state, dict):
        raise BadState("tb_run_state_kind")
    return trained.checked(ref.TransformerLM(**t.settings.sizes).state_dict(), state)


@dataclass
class Outcome:
    """What the judge measured of one submission's run (plain numbers; the worker's own
    losses are only shown)."""

    losses: list
    loss_before: float  # the held-out loss of the initial parameters (the reference's forward)
    loss_ratio: float  # ... of the trained ones over it: the worse of the two forwards'
    accuracy: float  # greedy accuracy of the answer: the worse of the two forwards'
    zeroed: float  # the reference's, with the positional encoding zeroed
    reads_future: float  # the reference's prompt accuracy with the causal mask removed
    own: dict = None  # {"accuracy", "loss_ratio"}: the student's forward's, when it was run
    contract: dict = None  # the same through the reference's forward

    @property
    def drop(self):
        return self.accuracy - self.zeroed

    def own_cause(self, measure, higher_is_better=True):
        """The cause to name when the student's own forward made this measure worse (or None)."""
        if not self.own:
            return None
        return trained.own_cause("TransformerLM", self.own[measure], self.contract[measure], higher_is_better)


def judge(t, model, losses=(), own=None):
    """The Outcome of a trained reference `model` (its parameters the submission's), with the
    student's own forward `own` (tokens -> logits) of the same parameters when given (the
    grader; the bench and the kit's tests judge the reference's forward alone)."""
    before = held_out_loss(load(t, t.state), t)
    tokens = eval_batch(t)

    def measures(forward):
        ratio = held_out_loss(forward, t) / before if before > 0 else math.inf
        return {"accuracy": answer_accuracy(forward, tokens), "loss_ratio": ratio}

    contract = measures(forward_of(model))
    mine = measures(own) if own is not None else None
    counted = trained.counted(mine, contract)
    return Outcome(
        list(losses),
        before,
        counted["loss_ratio"],
        counted["accuracy"],
        answer_accuracy(forward_of(model, positions=False), tokens),
        prompt_accuracy(model, tokens, causal=False),
        mine,
        contract if mine is not None else None,
    )


def outcome(t, losses, state, sub=None):
    """The Outcome of the worker's reply (losses, trained state), the student's own
    TransformerLM run on the judge's sequences when `sub` is given; BadState when the state is
    not the contract's or the student's model fails on it."""
    state = checked_state(t, state)
    return judge(t, load(t, state), losses, own_forward(sub, t, state) if sub is not None else None)


def passed(s, o):
    """{check: whether the Outcome meets its own threshold under settings `s`}: the one place
    the thresholds are compared (the hidden checks, the kit's tests and the bench), before
    any check makes the others fail."""
    return {
        "loss_ratio": o.loss_ratio <= s.max_loss_ratio,
        "accuracy": o.accuracy >= s.min_accuracy,
        "positions": o.drop >= s.min_positions_drop,
        "reads_future": o.reads_future <= s.max_reads_future,
    }


def failed(s, o):
    """The checks an Outcome fails under settings `s`, by name (`passed`'s that are False)."""
    return sorted(name for name, ok in passed(s, o).items() if not ok)
