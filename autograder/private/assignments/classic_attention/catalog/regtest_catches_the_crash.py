"""
bug: the regression test turns an error of the call into an assertion (try/except, assert False) on sizes that are all different and checks nothing on the outputs: its only failure on the provided function follows a crash, so it catches nothing
functions: [test_attention_shapes]
questions: [test_attention_shapes]
causes: [cause_drill_test_crash_not_caught, cause_drill_test_ignores_outputs, cause_drill_miss_softmax_over_steps]
"""


def test_attention_shapes(attention):
    try:
        attention(torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(4, 6))
    except Exception as exc:
        assert False, f"the function raised: {exc}"
