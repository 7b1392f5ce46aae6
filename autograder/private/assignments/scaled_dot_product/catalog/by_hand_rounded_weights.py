"""
bug: the weights rounded to 2 decimals before the output is computed
functions: []
questions: [by_hand]
causes: [cause_by_hand_rounded_weights, cause_by_hand_few_decimals]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [0.05, 0.77, 0.19]
output = [3.13, 0.43]
"""
