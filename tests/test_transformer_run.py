"""The transformer lab's run in the grader (question training_run of transformer_block;
`autograder/private/assignments/transformer_block/training.py`, grading.yml
`assignments.transformer_block.run`).

On grading.yml's seed the reference trained as the worker trains it passes every
check, and a model trained without the positional encoding, or without the causal
mask (the bench's ablated trainings, through the judge's module), fails its own
check; the judge refuses trained parameters that are not the contract's before it
evaluates them; the notebook's cell states the run's numbers; a careless setting
is one line. (What a submission's feedback says is the audit's and the battery's:
catalog entries and its battery.py.)
"""

import inspect
import math
from pathlib import Path

import pytest
import torch
import yaml

from autograder import config, declarations, schema
from autograder.build import grading_text
from autograder.judge import provided_source
from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import Remote
from autograder.private.assignments.transformer_block import training
from autograder.private.solutions import transformer_block as ref
from conftest import ROOT, course_cfg, limits

CFG = config.load(ROOT / "grading.yml")
NAME = "transformer_block"


@pytest.fixture(scope="module")
def run():
    """(settings, task, {model: Outcome}) on grading.yml's seed: three trainings, about 4 s of CPU each."""
    s = training.settings(CFG)
    t = training.task(s)
    trainings = {
        "reference": lambda: training.train_reference(t),
        "no positions": lambda: training.train_ablated(t, positions=False),
        "no mask": lambda: training.train_ablated(t, causal=False),
    }
    out = {}
    STATES.clear()
    for name, train in trainings.items():
        losses, state = train()
        STATES[name] = (losses, state)
        out[name] = training.outcome(t, losses, state)
    return s, t, out


STATES = {}  # name -> (losses, trained state) of the `run` fixture's trainings


@pytest.mark.slow
def test_the_reference_passes_every_check_and_each_ablation_fails_its_own(run):
    s, _, out = run
    ref = out["reference"]
    assert training.failed(s, ref) == [], ref
    assert len(ref.losses) == s.steps and all(math.isfinite(x) for x in ref.losses)
    assert "positions" in training.failed(s, out["no positions"]), out["no positions"]
    assert "reads_future" in training.failed(s, out["no mask"]), out["no mask"]
    assert out["no mask"].reads_future > s.max_reads_future > ref.reads_future


def _verdicts(outcome):
    """{check: its failure message or None} of the four hidden checks on an Outcome (no worker)."""
    from autograder.private.assignments.transformer_block import test_training_run as suite

    got, sub = {}, object()
    suite._RUNS[id(sub)] = (sub, outcome)
    try:
        for check in (
            suite.test_loss_goes_down,
            suite.test_accuracy,
            suite.test_uses_positions,
            suite.test_never_reads_ahead,
        ):
            try:
                check(sub, CFG)
                got[check.__name__.removeprefix("test_")] = None
            except pytest.fail.Exception as exc:
                got[check.__name__.removeprefix("test_")] = exc.msg
    finally:
        suite._RUNS.clear()
    return got


@pytest.mark.slow
def test_the_suite_fails_each_ablation_on_its_own_check_with_a_likely_cause(run):
    """The hidden checks, called with the judge's Outcomes (no worker): the reference passes all
    four, the model without positions fails all four (the positions' cause), the one without the
    mask fails the reads-ahead check."""
    _, _, out = run
    assert all(v is None for v in _verdicts(out["reference"]).values())
    without = _verdicts(out["no positions"])
    assert all(without.values()), without
    assert "positional_encoding(T, D)" in without["uses_positions"]
    assert all("\n" not in m for m in without.values())
    masked = _verdicts(out["no mask"])
    assert masked["never_reads_ahead"] and "causal_mask(T)" in masked["never_reads_ahead"]
    assert masked["uses_positions"] is None, masked


def test_each_check_charges_its_own_shortfall():
    """Figures made up around grading.yml's thresholds: a model that learned a little less than
    the accuracy threshold (a post-norm block trained, read through the pre-norm forward) loses
    the loss and accuracy points and keeps the two it earns (it uses its positions, it reads
    nothing ahead); one that reads ahead loses that point alone; one that learned nothing (no
    drop without its positions) loses all four, reading nothing ahead included."""
    s = training.settings(CFG)
    chance = s.chance

    def outcome(accuracy, zeroed, reads_future, ratio):
        return training.Outcome([2.0, 1.0], 2.0, ratio, accuracy, zeroed, reads_future)

    short = _verdicts(outcome(s.min_accuracy - 0.04, chance, chance, s.max_loss_ratio * 2))
    assert {k for k, v in short.items() if v} == {"loss_goes_down", "accuracy"}, short
    ahead = _verdicts(outcome(1.0, chance, 1.0, s.max_loss_ratio / 2))
    assert {k for k, v in ahead.items() if v} == {"never_reads_ahead"}, ahead
    nothing = _verdicts(outcome(chance, chance, chance, 1.0))
    assert all(nothing.values()), nothing


def _state():
    torch.manual_seed(0)
    return training.task(training.settings(CFG)).state


@pytest.mark.parametrize(
    "tamper, key",
    [
        (lambda st: {**st, "cheat": torch.zeros(3)}, "lab_run_state_extra"),
        (lambda st: {k: v for k, v in st.items() if k != "head.weight"}, "lab_run_state_missing"),
        (lambda st: {**st, "ln_f.weight": torch.full_like(st["ln_f.weight"], math.nan)}, "lab_run_state_not_finite"),
        (lambda st: {**st, "embed.weight": st["embed.weight"].T}, "lab_run_state_shape"),
        (lambda st: {**st, "head.weight": st["head.weight"].long()}, "lab_run_state_missing"),
        (lambda st: "trained", "tb_run_state_kind"),
    ],
)
def test_parameters_that_are_not_the_contracts_are_refused_before_any_evaluation(tamper, key):
    t = training.task(training.settings(CFG))
    with pytest.raises(training.BadState) as exc:
        training.outcome(t, [1.0] * t.settings.steps, tamper(dict(t.state)))
    assert exc.value.key == key


def test_the_task_is_the_seeds_and_the_notebook_states_the_run(tmp_path):
    s = training.settings(CFG)
    a, b = training.task(s), training.task(s)
    assert all(torch.equal(x, y) for x, y in zip(a.batches, b.batches)) and len(a.batches) == s.steps
    assert a.batches[0].shape == (s.batch_size, 2 * s.length + 1)
    assert training.task(training.settings(CFG, seed=s.seed + 1)).batches[0].ne(a.batches[0]).any()
    run = CFG.run(NAME)
    text = grading_text.render(grading_text.RUN_TAG, NAME, "en", CFG)
    th = run["thresholds"]
    for phrase in (
        f"{run['steps']} Adam steps",
        f"at most {th['loss_ratio_at_most']:g} times",
        f"at least {th['accuracy']:g} of its symbols",
        f"falls by at least {th['positions_drop']:g}",
        f"at most {th['reads_future_at_most']:g} of the prompt",
        f"within {run['cpu_seconds']:g} s of CPU",
    ):
        assert phrase in text, phrase
    changed = grading_text.render(grading_text.RUN_TAG, NAME, "pt-BR", _with_run(tmp_path, "steps: 123"))
    assert "123 passos do Adam" in changed
    assert _with_run(tmp_path, "steps: 123").run(NAME)["thresholds"] == run["thresholds"], "merged key by key"


def _with_run(tmp_path, text):
    """A course's grading.yml that lists the lab with `text` (YAML) as its run."""
    entry = {k: v for k, v in CFG.data["assignments"][NAME].items() if k != "run"}
    return course_cfg(tmp_path, {"assignments": {NAME: {**entry, "run": yaml.safe_load(text)}}})


@pytest.mark.parametrize(
    "text, named",
    [
        ("steps: 0", "steps"),
        ("cpu_seconds: -1", "cpu_seconds"),
        ("eval_cpu_seconds: 0", "eval_cpu_seconds"),
        ("length: 1", "length"),
        ("n_symbols: many", "n_symbols"),
        ("sizes: {d_model: 32, n_heads: 0, d_ff: 64, n_layers: 2}", "sizes.n_heads"),
        ("sizes: {d_model: 30, n_heads: 4, d_ff: 64, n_layers: 2}", "multiple of n_heads"),
        (
            "thresholds: {accuracy: 0.9, positions_drop: high, reads_future_at_most: 0.7, loss_ratio_at_most: 0.1}",
            "positions_drop",
        ),
        ("thresholds: {accuracy: 0.9}", "positions_drop"),
    ],
)
def test_a_careless_run_setting_is_one_line(tmp_path, text, named):
    with pytest.raises(config.ConfigError, match=named) as exc:
        _with_run(tmp_path, "{" + text + "}")
    assert "\n" not in str(exc.value) and f"assignments.{NAME}.run" in str(exc.value)


def test_a_run_section_without_its_keys_is_one_line():
    with pytest.raises(schema.Invalid, match="run needs seed, steps") as exc:
        declarations.run(NAME).schema.check({"lr": 0.003}, "run")
    assert "\n" not in str(exc.value)


# The student's notebook in the worker: the reference's graded parts, and TransformerLM's forward
# as each test writes it.
PARTS = "".join(inspect.getsource(o) + "\n\n" for o in (ref.positional_encoding, ref.FeedForward, ref.DecoderBlock))
LM = inspect.getsource(ref.TransformerLM)
NO_POSITIONS = LM.replace("        x = x + positional_encoding(T, D, device=x.device, dtype=x.dtype)", "")
# a forward that writes the reversal itself, whatever its parameters: the answer's logits from the prompt
SOLVES = (
    LM
    + """

class TransformerLM(TransformerLM):
    def forward(self, tokens, pad_mask=None):
        B, T = tokens.shape
        out = torch.zeros(B, T, self.head.out_features) + 0 * super().forward(tokens).sum()
        L = LENGTH  # the prompt's symbols, then SEP at position L
        for t in range(T):
            if t >= L and 2 * L - t - 1 >= 0:  # from SEP on: the prompt's symbol 2L - 1 - t comes next
                out[torch.arange(B), t, tokens[:, 2 * L - t - 1]] = 10.0
        return out
""".replace("LENGTH", str(CFG.run(NAME)["length"]))
)


def _own_outcome(forkserver, lm_source, losses, state):
    """The Outcome of (losses, state) with the student's TransformerLM (`lm_source`, the rest the
    reference's) run in a real worker on the judge's sequences, as the grader runs it."""
    code = PARTS + lm_source
    sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
    remote = Remote(sub, provided_source(NAME), limits(cpu_seconds_per_call=30, load_seconds=60), forkserver=forkserver)
    try:
        return training.outcome(training.task(training.settings(CFG)), losses, state, remote)
    finally:
        remote.close()


@pytest.mark.slow
def test_the_run_counts_the_worse_of_the_students_forward_and_the_contracts(run, forkserver):
    """The run's accuracy and loss are what both the student's own TransformerLM (in the worker,
    the trained state loaded) and the reference's forward make of the state, the worse counted:
    the reference's own model changes nothing; a forward that leaves the positions out, with
    weights trained with them (trained elsewhere), scores what it makes of them and fails every
    check, naming its own forward; a forward that writes the answer itself, with parameters that
    learned nothing (the initial ones), scores what the parameters do."""
    s, t, out = run
    losses, trained_state = STATES["reference"]
    same = _own_outcome(forkserver, LM, losses, trained_state)
    assert same.accuracy == pytest.approx(out["reference"].accuracy, abs=0.01)
    assert same.own["accuracy"] == pytest.approx(same.contract["accuracy"], abs=0.01)
    assert training.failed(s, same) == []

    elsewhere = _own_outcome(forkserver, NO_POSITIONS, losses, trained_state)
    assert elsewhere.contract["accuracy"] >= s.min_accuracy > elsewhere.own["accuracy"] == elsewhere.accuracy
    assert elsewhere.loss_ratio == elsewhere.own["loss_ratio"] > elsewhere.contract["loss_ratio"]
    verdicts = _verdicts(elsewhere)
    assert all(verdicts.values()), verdicts
    assert all("TransformerLM's own forward scores" in m for m in verdicts.values()), verdicts

    solves = _own_outcome(forkserver, SOLVES, [1.0] * s.steps, t.state)
    assert solves.own["accuracy"] == 1.0 and solves.accuracy == solves.contract["accuracy"] < s.min_accuracy
    assert all(_verdicts(solves).values())
