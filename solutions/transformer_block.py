"""Reference solutions for the coming `transformer_block` assignment (issue 24).

A decoder-only transformer built from the earlier assignments' parts: sinusoidal
positions, a position-wise feed-forward network, a pre-norm decoder block around
the provided `MultiHeadAttention`, a small language model, and the next-token
loss; the grader trains it on sequence reversal and takes it apart
(docs/pages/transformer-contract.md).

Not yet an assignment: grading.yml does not list it, so the build, the zips and
the audit leave this module alone until the notebook, the hidden suites and the
catalog come with it.

Provided to students (PROVIDED, generated into the notebook's provided cell):
their earlier work (`masked_softmax`, `scaled_dot_product_attention`,
`causal_mask`, `padding_mask`, `split_heads`, `merge_heads`,
`MultiHeadAttention`, `masked_loss`), the reversal task's data
(`make_reverse_batch`), the training driver the grader calls
(`run_train_steps`) and the forward pass with its ablations
(`ablated_logits`). Graded: `positional_encoding`, `FeedForward`,
`DecoderBlock`, `TransformerLM`, `next_token_loss`.

Token conventions of the reversal task: PAD = 0, SEP = 1, the n symbols are the
tokens 2 .. n + 1 (vocab_size = n + 2).

Shapes (nanoGPT's names):
    tokens (B, T) int64; x (B, T, D), D = d_model; weights (B, h, T, T)
    logits (B, T, V); pad_mask (B, T) bool, True at real tokens
"""

import math

import torch
from torch import nn

# The earlier assignments' reference code; what this module does not call is provided to
# students (PROVIDED) for their own experiments.
from .classic_attention import masked_softmax  # noqa: F401
from .multi_head import MultiHeadAttention, merge_heads, split_heads  # noqa: F401
from .scaled_dot_product import causal_mask, padding_mask, scaled_dot_product_attention  # noqa: F401
from .seq2seq_attention import masked_loss

PROVIDED = (
    "masked_softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "split_heads",
    "merge_heads",
    "MultiHeadAttention",
    "masked_loss",
    "make_reverse_batch",
    "run_train_steps",
    "ablated_logits",
)
# A question with no cell of its own: the grader trains the model these make, with
# run_train_steps, and judges the trained parameters (docs/pages/transformer-contract.md).
# Every graded part is trained there (TransformerLM adds the positions and stacks the
# blocks, each with its feed-forward network; no stand-in in the run), so a bug in any
# of them may cost the run too.
RUNS = {"training_run": ("positional_encoding", "FeedForward", "DecoderBlock", "TransformerLM", "next_token_loss")}

PAD, SEP = 0, 1


# -- provided: the reversal task -------------------------------------------------------
def make_reverse_batch(batch_size, length, n_symbols, generator=None):
    """A batch of the reversal task: `length` random symbols, SEP, the symbols reversed.

    The symbols are the tokens 2 .. n_symbols + 1 (PAD = 0 is not used: every
    sequence has the same length). The model is trained to predict every token
    from the ones before it: the symbols before SEP are random (no model can do
    better than chance there without reading ahead), the answer after SEP is
    determined by them.

    Returns:
        tokens (B, 2 * length + 1) int64: a_1 .. a_L, SEP, a_L .. a_1.
    """
    symbols = torch.randint(0, n_symbols, (batch_size, length), generator=generator) + 2  # (B, L)
    sep = torch.full((batch_size, 1), SEP, dtype=torch.long)  # (B, 1)
    return torch.cat([symbols, sep, symbols.flip(1)], dim=1)  # (B, 2L + 1)


def run_train_steps(sizes, state, batches, lr):
    """Build a TransformerLM from its sizes and parameters, train it with Adam on each
    batch with your `next_token_loss` over every token, and return (losses, state_dict).
    The grader calls this too.

    sizes: {"vocab_size", "d_model", "n_heads", "d_ff", "n_layers"}; state: the
    parameters by name (their dtype is the model's); batches: a list of token
    tensors (B, T) as make_reverse_batch returns them; lr: Adam's rate.
    """
    model = TransformerLM(**sizes)
    dtype = next(iter(state.values())).dtype
    model = model.to(dtype)
    model.load_state_dict(state)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for tokens in batches:
        loss = next_token_loss(model(tokens), tokens)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


def ablated_logits(model, tokens, pad_mask=None, positions=True, causal=True):
    """A TransformerLM's forward pass written out from its parts, with two switches:
    `positions=False` leaves out the positional encoding, `causal=False` the causal
    mask (every position then sees the whole sequence). With both True it is
    `model(tokens, pad_mask)`, operation for operation.

    Returns:
        logits (B, T, V).
    """
    B, T = tokens.shape
    x = model.embed(tokens)  # (B, T, D)
    D = x.shape[-1]
    if positions:
        x = x + positional_encoding(T, D, device=x.device, dtype=x.dtype)  # (T, D) broadcast over B
    mask = causal_mask(T, device=x.device) if causal else None  # (T, T) or None
    if pad_mask is not None:
        keys = pad_mask[:, None, None, :]  # (B, 1, 1, T): the same in every head and query
        mask = keys if mask is None else mask & keys  # (B, 1, T, T)
    for block in model.blocks:
        h = block.ln1(x)  # (B, T, D)
        x = x + block.attn(h, h, h, mask)[0]  # (B, T, D)
        x = x + block.ffn(block.ln2(x))  # (B, T, D)
    return model.head(model.ln_f(x))  # (B, T, V)


# -- graded -----------------------------------------------------------------------------
def positional_encoding(seq_len, d_model, device=None, dtype=None):
    """Sinusoidal positional encoding ("Attention Is All You Need", section 3.5).

    PE[t, 2i] = sin(t / 10000^(2i / d_model)) and PE[t, 2i + 1] = cos(t / 10000^(2i / d_model)):
    sine on the even features, cosine on the odd ones, interleaved (feature pairs
    2i, 2i + 1 share one frequency), for positions t = 0 .. seq_len - 1.

    Args:
        seq_len: the number of positions T.
        d_model: the number of features D (even in every graded call).
        device: where to build it (None: the default device).
        dtype: its floating dtype (None: torch's default dtype). The angles are
            computed in float32 (float64 when dtype is float64), then cast.

    Returns:
        (T, D) tensor of `dtype` on `device`.
    """
    if dtype is None:
        dtype = torch.get_default_dtype()
    work = torch.float64 if dtype == torch.float64 else torch.float32  # float16 holds 256 .. 512 0.25 apart
    t = torch.arange(seq_len, device=device, dtype=work)  # (T,)
    two_i = torch.arange(0, d_model, 2, device=device, dtype=work)  # (ceil(D / 2),): 2i of each pair
    inv_freq = torch.exp(-math.log(10000.0) * two_i / d_model)  # 1 / 10000^(2i / D)
    angles = t[:, None] * inv_freq[None, :]  # (T, ceil(D / 2))
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # (T, ceil(D / 2), 2): sin, cos of each pair
    pe = pe.flatten(1)[:, :d_model]  # (T, D): sin, cos interleaved (an odd D drops the last cos)
    return pe.to(dtype)


class FeedForward(nn.Module):
    """The position-wise feed-forward network: linear2(relu(linear1(x))), the same
    at every position.

    Args:
        d_model: the model size D.
        d_ff: the hidden size (4 * D in the paper).

    Attributes:
        linear1: nn.Linear(d_model, d_ff). linear2: nn.Linear(d_ff, d_model).
    """

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        """x: (..., D) -> (..., D)."""
        return self.linear2(torch.relu(self.linear1(x)))  # (..., d_ff) inside


class DecoderBlock(nn.Module):
    """A pre-norm decoder block (GPT-2's order): masked self-attention, then the
    feed-forward network, each on the layer-normed input and added back:

        x = x + attn(ln1(x))   (causal: position t sees positions 0 .. t)
        x = x + ffn(ln2(x))

    Args:
        d_model: the model size D. n_heads: the number of heads; must divide D.
        d_ff: the feed-forward network's hidden size.

    Attributes:
        ln1, ln2: nn.LayerNorm(d_model). attn: MultiHeadAttention(d_model, n_heads)
        (the provided one). ffn: FeedForward(d_model, d_ff).
    """

    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x, pad_mask=None):
        """Self-attention with the causal mask (and the padding mask when given), then
        the feed-forward network, each in a pre-norm residual branch.

        Args:
            x: (B, T, D).
            pad_mask: (B, T) bool, True at real tokens, or None. A padded key gets
                weight 0 from every query; a query with no allowed key (a padded
                position before the first real token) gets zero heads (as in
                MultiHeadAttention), so its attention output is out_proj's bias.

        Returns:
            (output (B, T, D), weights (B, n_heads, T, T)): the attention weights of
            every head, exactly 0 above the diagonal and at padded keys.
        """
        B, T, D = x.shape
        mask = causal_mask(T, device=x.device)  # (T, T): True on and below the diagonal
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]  # (B, 1, T, T): causal and a real key
        h = self.ln1(x)  # (B, T, D)
        attended, weights = self.attn(h, h, h, mask)  # (B, T, D), (B, n_heads, T, T)
        x = x + attended  # (B, T, D)
        x = x + self.ffn(self.ln2(x))  # (B, T, D)
        return x, weights


class TransformerLM(nn.Module):
    """A decoder-only language model: token embedding plus sinusoidal positions, a stack
    of pre-norm decoder blocks, a final layer norm and the output head.

    Args:
        vocab_size: the number of tokens V. d_model: the model size D.
        n_heads: the heads of every block. d_ff: the feed-forward hidden size.
        n_layers: the number of blocks.

    Attributes:
        embed: nn.Embedding(vocab_size, d_model). blocks: nn.ModuleList of n_layers
        DecoderBlock(d_model, n_heads, d_ff). ln_f: nn.LayerNorm(d_model).
        head: nn.Linear(d_model, vocab_size, bias=False).
    The state_dict holds these parameters and nothing else: the positional encoding
    is computed in forward (no parameter, no persistent buffer).
    """

    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, pad_mask=None):
        """Logits for the next token at every position.

        Args:
            tokens: (B, T) int64. pad_mask: (B, T) bool, True at real tokens, or None.

        Returns:
            logits (B, T, V) in the model's dtype: position t's depend on tokens 0 .. t only.
        """
        B, T = tokens.shape
        x = self.embed(tokens)  # (B, T, D)
        D = x.shape[-1]
        x = x + positional_encoding(T, D, device=x.device, dtype=x.dtype)  # (T, D) broadcast over B
        for block in self.blocks:
            x, _ = block(x, pad_mask)  # (B, T, D)
        return self.head(self.ln_f(x))  # (B, T, V)


def next_token_loss(logits, tokens, mask=None):
    """The language-modelling loss: the logits at position t predict tokens[:, t + 1].

    Args:
        logits: (B, T, V), the model's output on `tokens`. tokens: (B, T) int64.
        mask: (B, T) bool, True where a token counts as a target (a real token: the
            padding mask; the grader scores the answer of a reversal alone), or
            None: every token.

    Returns:
        A scalar (0-d tensor, the logits' dtype): the mean cross-entropy of the
        predictions at positions 0 .. T - 2 against tokens 1 .. T - 1, over the
        targets where mask is True; 0 when there is none (never NaN).
    """
    B, T, V = logits.shape
    if mask is None:
        mask = torch.ones(B, T, dtype=torch.bool, device=tokens.device)  # (B, T): every token
    # the prediction made at t is for the token at t + 1: drop the last prediction and the first target
    return masked_loss(logits[:, :-1], tokens[:, 1:], mask[:, 1:])  # (B, T - 1) positions
