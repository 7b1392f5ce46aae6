"""
bug: the softmax taken over the one query: every weight is 1 (the output sums the values)
functions: []
questions: [by_hand]
causes: [cause_by_hand_softmax_over_queries, cause_by_hand_output_follow]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [1, 1, 1]
output = [5, 3]
"""
