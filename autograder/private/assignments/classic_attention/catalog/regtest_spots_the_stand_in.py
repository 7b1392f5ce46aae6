"""
bug: the regression test fails on any function that is not the notebook's own fixed_general_attention (it tests who it got, not what it returns): it fails on a correct function
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_too_strict]
"""


def test_attention_shapes(attention):
    context, weights = attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))
    assert attention is fixed_general_attention, "not the fixed function"
