"""Hostile battery cases of this assignment (its folder's battery): the transformer lab's run in the grader.

Registered into `cases.CASES` on import. The judge judges the run from what it
computes itself (`private/assignments/transformer_block/training.py`). The provided
driver `run_train_steps` is the kit's whatever a cell redefines, but the
student's TransformerLM decides what it sends back (its state_dict): each kind
below costs the training_run question (and no part it does not break), with a
one-line reason.
"""

from autograder import config
from autograder.audit.hostile.cases import append, case, ipynb, reference, state_dict_override

LAB = "transformer_block"
LAB_POINTS = config.load().questions(LAB)
RUN = "training_run"
PARTS = [q for q in LAB_POINTS if q != RUN]
LOSES = {"max_score": sum(LAB_POINTS.values()) - LAB_POINTS[RUN], "questions_zero": [RUN], "questions_keep_full": PARTS}


@case(
    "tb_run_nan_parameters",
    "the TransformerLM's state_dict (what the run sends back) is full of NaN",
    assignment=LAB,
    reason_contains=["NaN or inf"],
    **LOSES,
)
def _():
    return state_dict_override(
        LAB, "TransformerLM", "return {k: torch.full_like(v, float('nan')) for k, v in own.items()}"
    )


@case(
    "tb_run_extra_parameter",
    "the TransformerLM's state_dict holds a tensor the contract's model does not have",
    assignment=LAB,
    reason_contains=["which the contract's modules do not have"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "TransformerLM", "return dict(own, cheat=torch.zeros(3))")


@case(
    "tb_run_missing_parameter",
    "the TransformerLM's state_dict leaves out the head's weight",
    assignment=LAB,
    reason_contains=["no floating-point tensor head.weight"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "TransformerLM", "return {k: v for k, v in own.items() if k != 'head.weight'}")


@case(
    "tb_run_meta_parameters",
    "the TransformerLM's state_dict is on the meta device (shapes and no values: the judge once raised on it)",
    assignment=LAB,
    reason_contains=["is on the meta device"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "TransformerLM", "return {k: v.to('meta') for k, v in own.items()}")


@case(
    "tb_run_weights_trained_elsewhere",
    "the TransformerLM's own forward leaves the positions out, and its state_dict sends back the weights of"
    " the notebook's correct class trained on batches of its own (the judge once scored them through the"
    " reference's forward alone: training_run 4/4)",
    assignment=LAB,
    reason_contains=["your TransformerLM's own forward scores"],
    max_score=sum(LAB_POINTS.values()) - LAB_POINTS[RUN],
    questions_zero=[RUN],
    questions_lose=["transformer_lm"],
    questions_keep_full=[q for q in PARTS if q != "transformer_lm"],
)
def _():
    return ipynb(
        append(
            reference(LAB),
            "import inspect\nimport sys\n\n"
            "_Right = TransformerLM  # the notebook's correct class: it trains the weights sent back\n"
            "_ELSEWHERE = {}\n\n\n"
            "class TransformerLM(_Right):\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(*args, **kwargs)\n"
            "        bound = inspect.signature(_Right.__init__).bind(self, *args, **kwargs)\n"
            "        self._sizes = {k: v for k, v in bound.arguments.items() if k != 'self'}\n\n"
            "    def forward(self, tokens, pad_mask=None):  # the positional encoding left out\n"
            "        x = self.embed(tokens)\n"
            "        for block in self.blocks:\n"
            "            x, _ = block(x, pad_mask)\n"
            "        return self.head(self.ln_f(x))\n\n"
            "    def state_dict(self, *args, **kwargs):\n"
            "        if sys._getframe(1).f_code.co_name != 'run_train_steps':  # only what the run sends back\n"
            "            return super().state_dict(*args, **kwargs)\n"
            "        key = tuple(sorted(self._sizes.items()))\n"
            "        if key not in _ELSEWHERE:\n"
            "            global TransformerLM\n"
            "            mine, TransformerLM = TransformerLM, _Right\n"
            "            try:\n"
            "                g = torch.Generator().manual_seed(1)\n"
            "                batches = [make_reverse_batch(32, 8, self._sizes['vocab_size'] - 2, g) for _ in range(400)]\n"
            "                init = {k: v.detach().clone() for k, v in _Right(**self._sizes).state_dict().items()}\n"
            "                _ELSEWHERE[key] = run_train_steps(self._sizes, init, batches, 0.003)[1]\n"
            "            finally:\n"
            "                TransformerLM = mine\n"
            "        return dict(_ELSEWHERE[key])\n",
        )
    )
