"""Hostile battery cases of this assignment (its folder's battery): the training lab's run in the grader.

Registered into `cases.CASES` on import. The judge judges the run from what it
computes itself (`private/assignments/seq2seq_attention/training.py`). The provided
driver `run_train_steps` is the kit's whatever a cell redefines, but the
student's classes decide what it sends back (their state_dict) and the
student's train_step decides what training happens: each kind below costs the
training_run question (and no part it does not break), with a one-line reason.
"""

from autograder import config
from autograder.audit.hostile.cases import append, case, ipynb, reference, state_dict_override

LAB = "seq2seq_attention"
LAB_POINTS = config.load().questions(LAB)
RUN = "training_run"
PARTS = [q for q in LAB_POINTS if q != RUN]
LOSES = {"max_score": sum(LAB_POINTS.values()) - LAB_POINTS[RUN], "questions_zero": [RUN], "questions_keep_full": PARTS}


def with_cell(source):
    """The lab's reference notebook with a code cell appended (the provided cell's functions,
    run_train_steps among them, are the kit's whatever a cell redefines: the student's
    classes and train_step are what a run can tamper with)."""
    return ipynb(append(reference(LAB), source))


@case(
    "run_fake_losses_untrained",
    "train_step trains nothing and returns losses that fall from 2.0 towards 0",
    assignment=LAB,
    reason_contains=["did not go down enough"],
    max_score=sum(LAB_POINTS.values()) - LAB_POINTS[RUN] - 1,
    questions_zero=[RUN],
    questions_lose=["train_step"],
    questions_keep_full=[q for q in PARTS if q != "train_step"],
)
def _():
    return with_cell(
        "_calls = [0]\n\n\n"
        "def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):\n"
        "    _calls[0] += 1\n"
        "    return 2.0 / _calls[0]\n"
    )


@case(
    "run_nan_parameters",
    "the Encoder's state_dict (what the run sends back) is full of NaN",
    assignment=LAB,
    reason_contains=["NaN or inf"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "Encoder", "return {k: torch.full_like(v, float('nan')) for k, v in own.items()}")


@case(
    "run_extra_parameter",
    "the AttentionDecoder's state_dict holds a tensor the contract's modules do not have",
    assignment=LAB,
    reason_contains=["which the contract's modules do not have"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "AttentionDecoder", "return dict(own, cheat=torch.zeros(3))")


@case(
    "run_wrong_reply",
    "the Encoder's state_dict is a string",
    assignment=LAB,
    reason_contains=["are not a state dict"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "Encoder", "return 'trained, trust me'")


@case(
    "run_meta_parameters",
    "the Encoder's state_dict is on the meta device (shapes and no values: the judge once raised on it)",
    assignment=LAB,
    reason_contains=["is on the meta device"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "Encoder", "return {k: v.to('meta') for k, v in own.items()}")


@case(
    "run_weights_trained_elsewhere",
    "the AttentionDecoder's own forward leaves its context out, and the two classes' state_dicts send back"
    " the weights of the notebook's correct classes trained on the run's batches (the judge once scored them"
    " through the reference's forward alone)",
    assignment=LAB,
    reason_contains=["AttentionDecoder's own forward scores"],
    max_score=sum(LAB_POINTS.values()) - LAB_POINTS[RUN],
    questions_zero=[RUN],
    questions_lose=["attention_decoder"],
    questions_keep_full=[q for q in PARTS if q != "attention_decoder"],
)
def _():
    return with_cell(
        "import sys\n\n"
        "_RightEncoder, _RightDecoder, _own_train_step = Encoder, AttentionDecoder, train_step\n"
        "_RUN = {'batches': [], 'sizes': None, 'trained': None}\n\n\n"
        "def train_step(encoder, decoder, optimizer, *batch):\n"
        "    if isinstance(decoder, AttentionDecoder) and type(decoder) is not _RightDecoder:\n"
        "        _RUN['batches'].append(batch)  # the run's batches, to train the right classes on\n"
        "    return _own_train_step(encoder, decoder, optimizer, *batch)\n\n\n"
        "def _elsewhere():\n"
        "    if _RUN['trained'] is None:\n"
        "        global Encoder, AttentionDecoder, train_step\n"
        "        saved = Encoder, AttentionDecoder, train_step\n"
        "        Encoder, AttentionDecoder, train_step = _RightEncoder, _RightDecoder, _own_train_step\n"
        "        try:\n"
        "            V, E, H, A = _RUN['sizes']\n"
        "            enc, dec = _RightEncoder(V, E, H), _RightDecoder(V, E, H, A)\n"
        "            sizes = {'vocab_size': V, 'emb_dim': E, 'hidden_dim': H, 'attn_dim': A}\n"
        "            _, e, d = run_train_steps('attention', sizes, enc.state_dict(), dec.state_dict(),\n"
        "                                      _RUN['batches'][-300:], 0.01, optimizer='adam')\n"
        "            _RUN['trained'] = (e, d)\n"
        "        finally:\n"
        "            Encoder, AttentionDecoder, train_step = saved\n"
        "    return _RUN['trained']\n\n\n"
        "def _for_the_run():  # the run's driver asks for the state it sends back\n"
        "    return sys._getframe(2).f_code.co_name == 'run_train_steps' and _RUN['sizes'] is not None\n\n\n"
        "class Encoder(_RightEncoder):\n"
        "    def state_dict(self, *args, **kwargs):\n"
        "        return dict(_elsewhere()[0]) if _for_the_run() else super().state_dict(*args, **kwargs)\n\n\n"
        "class AttentionDecoder(_RightDecoder):\n"
        "    def __init__(self, vocab_size, emb_dim, hidden_dim, attn_dim):\n"
        "        super().__init__(vocab_size, emb_dim, hidden_dim, attn_dim)\n"
        "        _RUN['sizes'] = (vocab_size, emb_dim, hidden_dim, attn_dim)\n\n"
        "    def forward(self, prev_token, state, encoder_states, mask):  # the context left out\n"
        "        embedded = self.embedding(prev_token)\n"
        "        context = torch.zeros_like(state)\n"
        "        new_state = self.gru(torch.cat([embedded, context], dim=-1), state)\n"
        "        weights = mask.to(state.dtype) / mask.sum(-1, keepdim=True)\n"
        "        return self.out(torch.cat([new_state, context], dim=-1)), new_state, weights\n\n"
        "    def state_dict(self, *args, **kwargs):\n"
        "        return dict(_elsewhere()[1]) if _for_the_run() else super().state_dict(*args, **kwargs)\n"
    )
