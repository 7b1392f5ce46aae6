"""
bug: the regression test calls the function and prints the shapes but asserts nothing: it passes on every broken variant
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_crash_not_caught, cause_drill_test_ignores_outputs, cause_drill_miss_softmax_over_steps]
"""


def test_attention_shapes(attention):
    context, weights = attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))
    print(context.shape, weights.shape)
