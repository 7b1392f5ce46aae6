"""The training lab (seq2seq_attention): what is specific to it.

The copy task's conventions, the decoder's padding and query contract on the
reference, and the grading of one submission whose Encoder and masked_loss
are wrong: train_step is graded through the provided driver on the provided
baseline with the judge standing in for masked_loss (Remote.call's
`isolate`), so it keeps its points, and the student's training cell does
not train in the worker.
"""
import json

import torch

from autograder.audit.catalog import entries, fill, reference_sources
from autograder.judge import grade
from conftest import template
from autograder.private.solutions import seq2seq_attention as ref
from autograder.private.solutions.classic_attention import additive_attention

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
    assert torch.equal(tgt[:, 1:T + 1][real], mapping[src[real] - 3] + 3)
    assert not bool((tgt[:, 1:T + 1][real] == src[real]).any())  # an identity copy scores nothing


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
        alone, h = enc.gru(enc.embedding(src[b:b + 1, :n]))
        assert torch.allclose(states[b, :n], alone[0]) and torch.allclose(final[b], h[0, 0])
        assert states[b, n:].abs().max() == 0 if n < 5 else True


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
