"""
bug: the regression test calls the function on good sizes, then fails whatever it returns: it fails on a correct function too, so its failures on the broken ones earn nothing
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_too_strict]
"""


def test_attention_shapes(attention):
    context, weights = attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))
    assert context.shape == (2, 3, 6) and weights.shape == (2, 3, 5)
    raise AssertionError("a regression test that never passes")
