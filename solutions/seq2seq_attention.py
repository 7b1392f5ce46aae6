"""Reference solutions for the `seq2seq_attention` training lab.

A GRU encoder-decoder with Bahdanau attention, trained with teacher forcing on
the copy task, against the baseline without attention of the previous lesson.

Provided to students (PROVIDED, generated into the notebook's provided cell):
`masked_softmax` and `additive_attention` (their classic_attention work), the
copy task's data (`make_copy_batch`, `length_mask`), the baseline
(`BaselineEncoder`, `BaselineDecoder`), the training loop (`fit`,
`run_train_steps`), greedy decoding and the accuracy-by-length evaluation with
its plot. Graded: `Encoder`, `AttentionDecoder`, `masked_loss`, `train_step`.

Token conventions: PAD = 0 pads, BOS = 1 starts a target, EOS = 2 ends it;
the n symbols are the tokens 3 .. n + 2 (vocab_size = n + 3).

Shapes:
    src (B, T) int64, src_lengths (B,) int64 in 1 .. T (on the CPU)
    tgt (B, T + 2) int64: BOS, the symbols, EOS, then PAD; tgt_lengths = src_lengths + 2
    encoder states (B, T, H), decoder state (B, H), logits (B, V)
"""
import math

import torch
from torch import nn

from .classic_attention import additive_attention, masked_softmax

PROVIDED = ("masked_softmax", "additive_attention", "length_mask", "make_copy_batch", "BaselineEncoder",
            "BaselineDecoder", "run_train_steps", "fit", "greedy_decode", "accuracy_by_length", "plot_accuracy")
# A question with no cell of its own: the grader trains the model these make, with
# run_train_steps, and judges the trained parameters (grading.yml `training_run`).
RUNS = {"training_run": ("Encoder", "AttentionDecoder", "masked_loss", "train_step")}


# -- provided: data ------------------------------------------------------------------
def length_mask(lengths, max_len):
    """(B, max_len) bool, True at positions t < lengths[b] (real tokens), on lengths' device."""
    return torch.arange(max_len, device=lengths.device) < lengths.unsqueeze(1)


def make_copy_batch(batch_size, min_len, max_len, n_symbols, generator=None, mapping=None):
    """A batch of the copy task: random symbol sequences of lengths min_len .. max_len.

    PAD = 0, BOS = 1, EOS = 2; the symbols are 3 .. n_symbols + 2. The target
    is the source copied (or, with `mapping`, a permutation of the n_symbols
    symbols, each symbol s replaced by mapping[s - 3] + 3), between BOS and EOS.

    Returns:
        src (B, T) int64 padded with 0, T the longest length in the batch;
        src_lengths (B,) int64; tgt (B, T + 2) int64; tgt_lengths (B,) = src_lengths + 2.
    """
    lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    T = int(lengths.max())
    symbols = torch.randint(0, n_symbols, (batch_size, T), generator=generator)  # (B, T)
    real = length_mask(lengths, T)
    src = torch.where(real, symbols + 3, 0)
    out = symbols if mapping is None else mapping[symbols]
    tgt = torch.zeros(batch_size, T + 2, dtype=torch.long)
    tgt[:, 0] = 1  # BOS
    tgt[:, 1:T + 1] = torch.where(real, out + 3, 0)
    tgt[torch.arange(batch_size), lengths + 1] = 2  # EOS after the last symbol
    return src, lengths, tgt, lengths + 2


# -- provided: the baseline (no attention) ---------------------------------------------
class BaselineEncoder(nn.Module):
    """The previous lesson's encoder: a GRU whose final state (at each sequence's
    last real token) is all the decoder gets. forward(src, src_lengths) ->
    (None, final (B, H)): it keeps no per-position states."""

    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def forward(self, src, src_lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(src), src_lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        _, final = self.gru(packed)  # (1, B, H)
        return None, final[0]


class BaselineDecoder(nn.Module):
    """The previous lesson's decoder: one GRU step per token from the previous
    token and state alone. forward(prev_token, state, encoder_states=None,
    mask=None) -> (logits (B, V), new_state (B, H), None): the encoder states
    and the mask are ignored (the same call as AttentionDecoder's, so that
    train_step and greedy_decode run both)."""

    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRUCell(emb_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim, vocab_size)

    def forward(self, prev_token, state, encoder_states=None, mask=None):
        new_state = self.gru(self.embedding(prev_token), state)  # (B, H)
        return self.out(new_state), new_state, None


# -- provided: training and evaluation -------------------------------------------------
def run_train_steps(kind, sizes, encoder_state, decoder_state, batches, lr, optimizer="sgd"):
    """Build a model from its sizes and parameters, run `train_step` on each batch, and
    return (losses, encoder_state, decoder_state). The grader calls this too.

    kind: "baseline" (BaselineEncoder, BaselineDecoder) or "attention" (your Encoder
    and AttentionDecoder); sizes: {"vocab_size", "emb_dim", "hidden_dim", "attn_dim"};
    the states: parameters by name (their dtype is the model's); batches: a list of
    (src, src_lengths, tgt, tgt_lengths); optimizer: "sgd" or "adam", at rate lr.
    """
    V, E, H = sizes["vocab_size"], sizes["emb_dim"], sizes["hidden_dim"]
    if kind == "baseline":
        encoder, decoder = BaselineEncoder(V, E, H), BaselineDecoder(V, E, H)
    else:
        encoder, decoder = Encoder(V, E, H), AttentionDecoder(V, E, H, sizes["attn_dim"])
    dtype = next(iter(encoder_state.values())).dtype
    encoder, decoder = encoder.to(dtype), decoder.to(dtype)
    encoder.load_state_dict(encoder_state)
    decoder.load_state_dict(decoder_state)
    params = list(encoder.parameters()) + list(decoder.parameters())
    opt = torch.optim.Adam(params, lr=lr) if optimizer == "adam" else torch.optim.SGD(params, lr=lr)
    losses = [float(train_step(encoder, decoder, opt, *batch)) for batch in batches]
    return losses, encoder.state_dict(), decoder.state_dict()


def fit(
    encoder, decoder, n_steps, batch_size, min_len, max_len, n_symbols, lr=3e-3, seed=0, every=100,
    report="{step:5d}  {loss:.3f}",
):
    """Train `encoder` and `decoder` with Adam on fresh copy batches, calling your
    `train_step` once per batch; prints the mean loss every `every` steps (the line
    `report` formats with step and loss). Returns the losses."""
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=lr)
    losses = []
    for step in range(1, n_steps + 1):
        batch = make_copy_batch(batch_size, min_len, max_len, n_symbols, generator)
        losses.append(float(train_step(encoder, decoder, opt, *batch)))
        if every and step % every == 0:
            print(report.format(step=step, loss=sum(losses[-every:]) / every))
    return losses


def greedy_decode(encoder, decoder, src, src_lengths, n_steps):
    """Decode `n_steps` tokens greedily from BOS (each step's argmax feeds the next).

    Returns (tokens (B, n_steps) int64, weights (B, n_steps, T) or None for the baseline).
    """
    with torch.no_grad():
        states, state = encoder(src, src_lengths)
        mask = length_mask(src_lengths, src.shape[1])
        token = torch.full((src.shape[0],), 1, dtype=torch.long)  # BOS
        tokens, weights = [], []
        for _ in range(n_steps):
            logits, state, w = decoder(token, state, states, mask)
            token = logits.argmax(-1)
            tokens.append(token)
            weights.append(w)
    return torch.stack(tokens, 1), (None if weights[0] is None else torch.stack(weights, 1))


def accuracy_by_length(encoder, decoder, lengths, n_symbols, n_per_length=200, seed=1234, mapping=None):
    """{length: token accuracy} of greedy decoding on fresh sequences of each length
    (the share of the `length` symbols decoded right; chance is 1 / n_symbols)."""
    generator = torch.Generator().manual_seed(seed)
    encoder.eval()
    decoder.eval()
    out = {}
    for L in lengths:
        src, src_lengths, tgt, _ = make_copy_batch(n_per_length, L, L, n_symbols, generator, mapping)
        tokens, _ = greedy_decode(encoder, decoder, src, src_lengths, L)
        out[L] = float((tokens == tgt[:, 1:L + 1]).double().mean())
    encoder.train()
    decoder.train()
    return out


def plot_accuracy(results, n_symbols, *, title, xlabel, ylabel, chance):
    """Plot {model name: {length: accuracy}} with the chance level (the texts: title,
    axis labels and the chance line's label, in the notebook's language)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, acc in results.items():
        ax.plot(list(acc), list(acc.values()), marker="o", label=name)
    ax.axhline(1 / n_symbols, color="grey", linestyle=":", label=chance)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.legend()
    plt.show()


# -- graded ---------------------------------------------------------------------------
class Encoder(nn.Module):
    """A GRU encoder that keeps every state, for the attention to read.

    Args:
        vocab_size: V. emb_dim: E. hidden_dim: H.

    Attributes:
        embedding: nn.Embedding(vocab_size, emb_dim).
        gru: nn.GRU(emb_dim, hidden_dim, batch_first=True) (one layer, one direction).
    """

    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def forward(self, src, src_lengths):
        """Encode a padded batch.

        Args:
            src: (B, T) int64 tokens, padded after each sequence's length.
            src_lengths: (B,) int64 in 1 .. T, on the CPU.

        Returns:
            (states, final): states (B, T, H), the GRU state after each real token
            and exactly 0 at padded positions; final (B, H), the state after each
            sequence's last real token (not after the padding).
        """
        T = src.shape[1]
        embedded = self.embedding(src)  # (B, T, E)
        packed = nn.utils.rnn.pack_padded_sequence(embedded, src_lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        out, final = self.gru(packed)  # final (1, B, H): the state at each last real token
        states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=T)  # (B, T, H)
        return states, final[0]


class AttentionDecoder(nn.Module):
    """One decoder step with Bahdanau attention over the encoder states.

    Args:
        vocab_size: V. emb_dim: E. hidden_dim: H (the encoder's too). attn_dim: A.

    Attributes:
        embedding: nn.Embedding(vocab_size, emb_dim).
        W_a: Parameter (A, H), U_a: Parameter (A, H), v_a: Parameter (A,): the attention's.
        gru: nn.GRUCell(emb_dim + hidden_dim, hidden_dim), fed [embedding; context].
        out: nn.Linear(2 * hidden_dim, vocab_size), applied to [new state; context].
    """

    def __init__(self, vocab_size, emb_dim, hidden_dim, attn_dim):
        super().__init__()
        bound = 1 / math.sqrt(hidden_dim)
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.W_a = nn.Parameter(torch.empty(attn_dim, hidden_dim).uniform_(-bound, bound))
        self.U_a = nn.Parameter(torch.empty(attn_dim, hidden_dim).uniform_(-bound, bound))
        self.v_a = nn.Parameter(torch.empty(attn_dim).uniform_(-bound, bound))
        self.gru = nn.GRUCell(emb_dim + hidden_dim, hidden_dim)
        self.out = nn.Linear(2 * hidden_dim, vocab_size)

    def forward(self, prev_token, state, encoder_states, mask):
        """One step.

        Args:
            prev_token: (B,) int64, the previous output token (BOS at the first step).
            state: (B, H), the decoder state BEFORE this step: the attention's query.
            encoder_states: (B, T, H). mask: (B, T) bool, True at real source tokens.

        Returns:
            (logits (B, V), new_state (B, H), weights (B, T)); padded source
            positions get weight exactly 0.
        """
        embedded = self.embedding(prev_token)  # (B, E)
        context, weights = additive_attention(state, encoder_states, self.W_a, self.U_a, self.v_a,
                                              mask)  # (B, H), (B, T): the query is the state before the step
        new_state = self.gru(torch.cat([embedded, context], dim=-1), state)  # (B, H)
        logits = self.out(torch.cat([new_state, context], dim=-1))  # (B, V)
        return logits, new_state, weights


def masked_loss(logits, targets, mask):
    """Cross-entropy averaged over the real (unpadded) target positions only.

    Args:
        logits: (B, T, V). targets: (B, T) int64 token ids (valid ids everywhere,
            PAD at padded positions). mask: (B, T) bool, True at real positions.

    Returns:
        A scalar (0-d tensor, the logits' dtype): the mean over the positions
        where mask is True of -log softmax(logits)[target]; 0 when no position
        is True (never NaN).
    """
    log_probs = torch.log_softmax(logits, dim=-1)  # (B, T, V)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    weights = mask.to(logits.dtype)  # (B, T)
    return -(picked * weights).sum() / weights.sum().clamp(min=1)


def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):
    """One optimisation step with teacher forcing; returns the loss as a float.

    The decoder starts from the encoder's final state and, at step t, is fed the
    true token tgt[:, t] (BOS first) and trained to predict tgt[:, t + 1]: the
    masked loss over the T_tgt - 1 steps, real positions only (t + 1 < tgt_lengths).
    Gradients are zeroed before the backward pass, then the optimiser steps once.

    Args:
        encoder, decoder: the modules (any with the Encoder / AttentionDecoder calls).
        optimizer: a torch optimiser over their parameters.
        src (B, T), src_lengths (B,), tgt (B, T_tgt), tgt_lengths (B,): a batch
            as make_copy_batch returns it.
    """
    optimizer.zero_grad()
    states, state = encoder(src, src_lengths)  # (B, T, H), (B, H)
    mask = length_mask(src_lengths, src.shape[1])  # (B, T)
    inputs, targets = tgt[:, :-1], tgt[:, 1:]  # (B, T_tgt - 1) each: feed token t, predict token t + 1
    logits = []
    for t in range(inputs.shape[1]):
        step_logits, state, _ = decoder(inputs[:, t], state, states, mask)  # (B, V)
        logits.append(step_logits)
    logits = torch.stack(logits, dim=1)  # (B, T_tgt - 1, V)
    loss = masked_loss(logits, targets, length_mask(tgt_lengths - 1, targets.shape[1]))
    loss.backward()
    optimizer.step()
    return loss.item()
