"""The training lab (seq2seq_attention): what is specific to it.

The copy task's conventions, the decoder's padding and query contract on the
reference, and the grading of one submission whose Encoder and masked_loss
are wrong: train_step is graded through the provided driver on the provided
baseline with the judge standing in for masked_loss (Remote.call's
`isolate`), so it keeps its points, and the student's training cell does
not train in the worker.
"""

import json

import pytest
import torch
import yaml

from autograder.audit.catalog import entries, fill, reference_sources
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.solutions.classic_attention import additive_attention
from conftest import grade, template

ASSIGNMENT = "seq2seq_attention"


def test_copy_batch_conventions():
    g = torch.Generator().manual_seed(0)
    mapping = torch.tensor([1, 2, 3, 0])  # a derangement of 4 symbols
    src, src_lengths, tgt, tgt_lengths = ref.make_copy_batch(6, 1, 7, 4, g, mapping)
    T = int(src_lengths.max())
    assert src.shape == (6, T) and tgt.shape == (6, T + 2) and torch.equal(tgt_lengths, src_lengths + 2)
    real = ref.length_mask(src_lengths, T)
    assert bool((src[real] >= 3).all()) and bool((src[~real] == 0).all())
    assert bool((tgt[:, 0] == 1).all())
    assert bool((tgt[torch.arange(6), src_lengths + 1] == 2).all())
    assert torch.equal(tgt[:, 1 : T + 1][real], mapping[src[real] - 3] + 3)
    assert not bool((tgt[:, 1 : T + 1][real] == src[real]).any())  # an identity copy scores nothing


def test_reference_decoder_padding_and_query():
    torch.manual_seed(0)
    dec = ref.AttentionDecoder(11, 4, 6, 5).double()
    state, memory = torch.randn(3, 6, dtype=torch.float64), torch.randn(3, 5, 6, dtype=torch.float64)
    mask = ref.length_mask(torch.tensor([5, 2, 1]), 5)
    logits, new_state, weights = dec(torch.tensor([1, 4, 7]), state, memory, mask)
    assert weights[~mask].abs().max() == 0
    _, want = additive_attention(state, memory, dec.W_a, dec.U_a, dec.v_a, mask)
    assert torch.allclose(weights, want)  # the query is the state before the step
    _, _, again = dec(torch.tensor([9, 9, 9]), state, memory, mask)
    assert torch.equal(again, weights)


def test_reference_encoder_against_sequences_run_alone():
    torch.manual_seed(1)
    enc = ref.Encoder(11, 4, 6).double()
    lengths = torch.tensor([2, 5, 3])
    src = torch.where(ref.length_mask(lengths, 5), torch.randint(3, 11, (3, 5)), 0)
    states, final = enc(src, lengths)
    for b, n in enumerate(lengths.tolist()):
        alone, h = enc.gru(enc.embedding(src[b : b + 1, :n]))
        assert torch.allclose(states[b, :n], alone[0]) and torch.allclose(final[b], h[0, 0])
        assert states[b, n:].abs().max() == 0 if n < 5 else True


@pytest.mark.slow
def test_train_step_keeps_its_points_when_encoder_and_loss_are_wrong(tmp_path):
    by_name = {e.name: e for e in entries(ASSIGNMENT)}
    sources = reference_sources(ASSIGNMENT)
    sources.update(by_name["real_d2l_encoder_gru_over_padding"].sources)
    sources.update(by_name["real_d2l_masked_ce_mean_over_time"].sources)
    path = tmp_path / "two_bugs.ipynb"
    path.write_text(json.dumps(fill(template(ASSIGNMENT), sources)))
    result = grade(path, assignment=ASSIGNMENT)
    scores = {q.name: (q.score, q.max_score) for q in result.questions.values()}
    assert scores["train_step"][0] == scores["train_step"][1], result.questions["train_step"].lines
    assert scores["attention_decoder"][0] == scores["attention_decoder"][1]
    assert scores["encoder"][0] < scores["encoder"][1]
    assert scores["masked_loss"][0] < scores["masked_loss"][1]
    assert not getattr(result, "internal_errors", None)
    # the notebook's training cell trains only in Jupyter: in the worker it does nothing, so loading is quick
    assert result.seconds < 120


# -- the training run in the grader (private/assignments/seq2seq_attention/training.py) ------------
def _settings(seed=None):
    from autograder import config
    from autograder.private.assignments.seq2seq_attention import training

    return training, training.settings(config.load(), seed=seed)


def test_the_run_task_is_the_judges_and_a_copy_scores_nothing():
    training, s = _settings()
    a, b = training.task(s), training.task(s)
    assert torch.equal(a.mapping, b.mapping) and not bool((a.mapping == torch.arange(s.n_symbols)).any())
    assert all(torch.equal(x, y) for (x, *_), (y, *_) in zip(a.batches, b.batches)) and len(a.batches) == s.steps
    assert all(torch.equal(a.encoder_state[k], b.encoder_state[k]) for k in a.encoder_state)
    for L in s.eval_lengths:  # the judge's evaluation sequences: copying the source gets no token right
        src, lengths, want = training.eval_batch(a, L)
        assert src.shape == want.shape == (s.eval_per_length, L) and not bool((src == want).any())
    other = training.task(_settings(seed=s.seed + 1)[1])
    assert not torch.equal(other.mapping, a.mapping) or not torch.equal(other.batches[0][0], a.batches[0][0])


def test_trained_parameters_are_checked_before_the_judge_uses_them():
    training, s = _settings()
    task = training.task(s)
    enc, dec = dict(task.encoder_state), dict(task.decoder_state)
    training.load_trained(task, enc, dec)  # the initial parameters are well-formed

    def reason(e, d):
        try:
            training.load_trained(task, e, d)
        except training.BadState as exc:
            return exc.key
        return None

    assert reason({k: v for k, v in enc.items() if k != "gru.weight_ih_l0"}, dec) == "lab_run_state_missing"
    assert reason(enc, dict(dec, W_a=torch.zeros(3, 3))) == "lab_run_state_shape"
    assert reason(enc, dict(dec, v_a=torch.full_like(dec["v_a"], float("inf")))) == "lab_run_state_not_finite"
    assert reason(enc, dict(dec, extra=torch.zeros(2))) == "lab_run_state_extra"
    assert reason(enc, dict(dec, v_a=dec["v_a"].long())) == "lab_run_state_missing"
    assert reason("not a dict", dec) == "lab_run_state_kind"


def test_the_run_judges_untrained_parameters_and_a_model_that_does_not_use_its_attention():
    """The initial parameters fail the loss, accuracy and gap checks; a model whose accuracy
    survives the zeroed context fails every check (the shortcut rule), whatever its accuracy."""
    import pytest

    from autograder import config
    from autograder.private.assignments.seq2seq_attention import test_training_run as suite

    training, s = _settings()
    task = training.task(s)
    o = training.outcome(task, [1.0] * s.steps, task.encoder_state, task.decoder_state)
    assert o.loss_ratio == pytest.approx(1.0) and max(o.accuracy.values()) < 0.4
    assert all(o.gap(L) < g for L, g in s.min_gap)
    cheat = training.Outcome(
        [1.0],
        3.0,
        0.05,
        {L: 1.0 for L in s.eval_lengths},
        {L: 0.9 for L in s.eval_lengths},
        {L: 0.3 for L in s.eval_lengths},
    )
    cfg = config.load()

    class Sub:
        pass

    sub = Sub()
    suite._RUNS[id(sub)] = (sub, cheat)
    for check in (
        suite.test_loss_goes_down,
        suite.test_accuracy_by_length,
        suite.test_beats_the_baseline,
        suite.test_uses_its_attention,
    ):
        with pytest.raises(pytest.fail.Exception, match="do not come from its attention"):
            check(sub, cfg)
    suite._RUNS.clear()


def test_a_course_overrides_the_run_key_by_key_and_a_bad_threshold_is_one_line(tmp_path):
    import pytest

    from autograder import config

    run = _with_run(tmp_path, {"steps": 400}).run(ASSIGNMENT)
    assert run["steps"] == 400 and run["thresholds"] == config.load().run(ASSIGNMENT)["thresholds"]
    bad = {
        "thresholds": {
            "accuracy": {5: 0.9},
            "gap_over_baseline": {12: 0.2},
            "zeroed_context_at_most": 0.3,
            "loss_ratio_at_most": 0.5,
        }
    }
    with pytest.raises(config.ConfigError, match=rf"{ASSIGNMENT}.run.thresholds.accuracy must map lengths") as exc:
        _with_run(tmp_path, bad)
    assert "\n" not in str(exc.value)


def _with_run(tmp_path, run):
    """The Config of a course's grading.yml that lists the lab with `run` as its run."""
    from autograder import config
    from conftest import course_cfg

    entry = {k: v for k, v in config.load().data["assignments"][ASSIGNMENT].items() if k != "run"}
    return course_cfg(tmp_path, {"assignments": {ASSIGNMENT: {**entry, "run": run}}})


def test_a_careless_run_setting_is_one_line_not_an_error_per_submission(tmp_path):
    import pytest

    from autograder import config

    for text, named in (
        ("steps: 0", "steps"),
        ("cpu_seconds: -1", "cpu_seconds"),
        ("eval_cpu_seconds: 0", "eval_cpu_seconds"),
        ("batch_size: many", "batch_size"),
        ("sizes: {emb_dim: 16, hidden_dim: 0, attn_dim: 16}", "sizes.hidden_dim"),
        ("n_symbols: 1", "n_symbols"),
        ("eval_lengths: []", "eval_lengths"),
    ):
        with pytest.raises(config.ConfigError, match=named) as exc:
            _with_run(tmp_path, yaml.safe_load("{" + text + "}"))
        assert "\n" not in str(exc.value)


def _step_without_update():
    """The reference train_step less its optimizer.step(): it computes the loss and the
    gradients and changes no parameter."""
    source = reference_sources(ASSIGNMENT)["train_step"]
    lines = [line for line in source.splitlines(keepends=True) if line.strip() != "optimizer.step()"]
    assert len(lines) == len(source.splitlines()) - 1, "the reference's train_step has one optimizer.step()"
    return "".join(lines)


@pytest.mark.parametrize("step", ["does_nothing", "no_update"])
def test_a_train_step_that_trains_nothing_scores_nothing(tmp_path, step):
    """Padding changes nothing in a step that changes nothing: that check is a property, and
    earns nothing while the losses and updates are wrong."""
    sources = reference_sources(ASSIGNMENT)
    if step == "does_nothing":
        sources.update({e.name: e for e in entries(ASSIGNMENT)}["train_step_does_nothing"].sources)
    else:
        sources["train_step"] = _step_without_update()
    path = tmp_path / f"{step}.ipynb"
    path.write_text(json.dumps(fill(template(ASSIGNMENT), sources)))
    result = grade(path, assignment=ASSIGNMENT, pytest_args=("-k", "test_train_step"))
    q = result.questions["train_step"]
    assert q.score == 0, q.lines
    padding = next(r for r in q.checks if r["check"] == "test_padding_changes_nothing")
    assert padding["failed"] == 0 and padding.get("gated"), q.checks


# The AttentionDecoder's forward with its context left out (the notebook's own classes otherwise)
NO_CONTEXT = """

class AttentionDecoder(AttentionDecoder):
    def forward(self, prev_token, state, encoder_states, mask):
        embedded = self.embedding(prev_token)
        context = torch.zeros_like(state)
        new_state = self.gru(torch.cat([embedded, context], dim=-1), state)
        return self.out(torch.cat([new_state, context], dim=-1)), new_state, mask.to(state.dtype)
"""


@pytest.mark.slow
def test_the_run_counts_the_worse_of_the_students_modules_and_the_contracts(forkserver):
    """The run's accuracy and loss are what both the student's own Encoder and AttentionDecoder (in
    a real worker, the trained states loaded) and the reference's forward make of the states, the
    worse counted: the reference's own classes change nothing; a decoder that leaves its context
    out, with states trained with it (trained elsewhere), scores what it makes of them and fails
    every check, naming its own forward."""
    import inspect
    from pathlib import Path

    from autograder import config
    from autograder.judge import provided_source
    from autograder.judge.notebook import Cell, Submission
    from autograder.judge.remote import Remote
    from autograder.private.assignments.seq2seq_attention import test_training_run as suite
    from conftest import limits

    training, s = _settings()
    task = training.task(s)
    losses, enc, dec = training.train_here(task, "attention")
    states = (enc.state_dict(), dec.state_dict())

    def outcome(extra):
        code = inspect.getsource(ref.Encoder) + "\n\n" + inspect.getsource(ref.AttentionDecoder) + extra
        sub = Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)])
        remote = Remote(sub, provided_source(ASSIGNMENT), limits(load_seconds=60), forkserver=forkserver)
        try:
            return training.outcome(task, losses, *states, sub=remote)
        finally:
            remote.close()

    same = outcome("")
    assert same.accuracy == pytest.approx(same.contract["accuracy"]) and same.own["accuracy"] == same.accuracy
    assert all(a >= least for L, least in s.min_accuracy for a in [same.accuracy[L]])
    elsewhere = outcome(NO_CONTEXT)
    short = s.min_accuracy[0][0]
    assert elsewhere.own["accuracy"][short] < elsewhere.contract["accuracy"][short]
    assert elsewhere.accuracy == elsewhere.own["accuracy"]
    cfg = config.load()

    class Sub:
        pass

    sub = Sub()
    suite._RUNS[id(sub)] = (sub, elsewhere)
    try:
        for check in (
            suite.test_loss_goes_down,
            suite.test_accuracy_by_length,
            suite.test_beats_the_baseline,
            suite.test_uses_its_attention,
        ):
            with pytest.raises(pytest.fail.Exception, match="AttentionDecoder.s own forward scores"):
                check(sub, cfg)
    finally:
        suite._RUNS.clear()
