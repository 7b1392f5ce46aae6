"""Hostile battery cases (cases_stand_in): a stand-in answering for the part being graded.

Registered into `cases.CASES` on import. While the judge grades a part, it stands in for the
other graded parts the student's code calls (`judge/stand_in.py`); each case below reaches
the reference of the graded part itself through one of them: a stood-in class's submodule
(`TransformerLM(...).blocks[0]`, `DecoderBlock(...).ffn`) run with the student's own
parameters, or a stood-in function whose reference calls it (`dot_attention` on scores laid
out as keys, whose weights are `masked_softmax`'s). Where no stand-in is there to borrow, each
raises, as a stub does: the attacked question may earn no more than its control, the same
notebook with that branch always taken (what the student's own code earns: a class's
parameters are its own work, its forward is not).
"""

from autograder import config
from autograder.audit.hostile.cases import CLASSIC, append, case, ipynb, reference, replace_function

LAB = "transformer_block"
LAB_QS = [q for q in config.load().questions(LAB) if q != "training_run"]  # the run trains the attack's own parts
CLASSIC_QS = list(config.load().questions(CLASSIC))

BLOCK_THROUGH_LM = """
class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.sizes = (d_model, n_heads, d_ff)

    def forward(self, x, pad_mask=None):
        if OWN_ONLY or TransformerLM is _OWN_LM:
            raise NotImplementedError("no stand-in to borrow from")
        block = TransformerLM(4, *self.sizes, 1).blocks[0]
        return torch.func.functional_call(block, dict(self.named_parameters()), (x, pad_mask))


_OWN_LM = TransformerLM
"""

FFN_THROUGH_BLOCK = """
class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.sizes = (d_model, d_ff)

    def forward(self, x):
        if OWN_ONLY or DecoderBlock is _OWN_BLOCK:
            raise NotImplementedError("no stand-in to borrow from")
        ffn = DecoderBlock(self.sizes[0], 1, self.sizes[1]).ffn
        return torch.func.functional_call(ffn, dict(self.named_parameters()), (x,))


_OWN_BLOCK = DecoderBlock
"""

SOFTMAX_THROUGH_DOT = """def masked_softmax(scores, mask=None, dim=-1):
    if OWN_ONLY or dot_attention is globals().get("_OWN_DOT", dot_attention):
        raise NotImplementedError("no stand-in to borrow from")
    rows = scores.movedim(dim, -1)
    shape = rows.shape
    flat = rows.reshape(-1, shape[-1])
    keep = None if mask is None else torch.broadcast_to(mask, scores.shape).movedim(dim, -1).reshape(flat.shape)
    query = torch.ones(flat.shape[0], 1, dtype=flat.dtype, device=flat.device)
    _, weights = dot_attention(query, flat.unsqueeze(-1), keep)  # scores[b, i] = 1 . h_{b,i}
    return weights.reshape(shape).movedim(-1, dim)
"""


def _attack(assignment, name, source, borrow, tail=""):
    """The reference notebook with `name` replaced by `source` (its cell, or a cell appended for a
    class) and `tail` appended: borrowing from a stand-in, or (`borrow` False, the control) never."""
    source = source.replace("OWN_ONLY", str(not borrow))
    nb = reference(assignment, demo=False)
    nb = append(nb, source) if source.lstrip().startswith("class") else replace_function(nb, name, source)
    return ipynb(append(nb, tail) if tail else nb)


def _pair(name, what, assignment, question, questions, cls, source, tail=""):
    """A case that borrows the reference of `question` from a stand-in, and its control."""
    control = f"{name}_control"
    case(
        control,
        f"control of {name}: the same {cls}, never borrowing (it raises)",
        assignment=assignment,
        questions_lose=[question],
        questions_keep_full=[q for q in questions if q != question],
    )(lambda: _attack(assignment, cls, source, False, tail))
    case(
        name,
        what,
        assignment=assignment,
        not_above=control,
        questions_lose=[question],
        questions_keep_full=[q for q in questions if q != question],
    )(lambda: _attack(assignment, cls, source, True, tail))


_pair(
    "tb_stand_in_block_through_lm",
    "DecoderBlock's forward runs the judge's stood-in TransformerLM's blocks[0] with its own parameters",
    LAB,
    "decoder_block",
    LAB_QS,
    "DecoderBlock",
    BLOCK_THROUGH_LM,
)
_pair(
    "tb_stand_in_ffn_through_block",
    "FeedForward's forward runs the judge's stood-in DecoderBlock's ffn with its own parameters",
    LAB,
    "feed_forward",
    LAB_QS,
    "FeedForward",
    FFN_THROUGH_BLOCK,
)
_pair(
    "stand_in_softmax_through_dot",
    "classic attention: masked_softmax lays its scores out as keys and asks the judge's stood-in "
    "dot_attention for its weights (the reference masked_softmax of them)",
    CLASSIC,
    "masked_softmax",
    CLASSIC_QS,
    "masked_softmax",
    SOFTMAX_THROUGH_DOT,
    "_OWN_DOT = dot_attention\n",
)

# Arguments the reference refuses, of every kind a student's code can send a stood-in function:
# a list, a dict and a string where the scores go, a mask that is not one, a dimension out of
# range, one argument too many. Each is the student's error (the reference's contract refusing
# it, `faults.contract`), raised in their code: never a grader fault, whatever it sends.
HOSTILE_ARGUMENTS = """def dot_attention(decoder_state, encoder_states, mask=None):
    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)
    for args, kwargs in [
        (([[1.0, 2.0]],), {}),
        (({"a": 1},), {}),
        (("text",), {}),
        ((scores,), {"mask": "x"}),
        ((scores,), {"mask": {"k": scores}}),
        ((scores,), {"dim": 99}),
        ((scores, None, -1, 5), {}),
    ]:
        try:
            masked_softmax(*args, **kwargs)
        except Exception:
            pass
    weights = masked_softmax(scores, mask, dim=-1)
    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights
"""


@case(
    "stand_in_refused_arguments",
    "dot_attention first sends the stood-in masked_softmax arguments its reference refuses "
    "(a list, a dict, a string, a wrong mask, a dimension out of range, an argument too many), "
    "catching each error: the student's errors, never a grader fault",
    assignment=CLASSIC,
    questions_keep_full=[q for q in CLASSIC_QS if q != "dot_attention"],
)
def _():
    return ipynb(replace_function(reference(CLASSIC, demo=False), "dot_attention", HOSTILE_ARGUMENTS))
