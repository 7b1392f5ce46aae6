"""
bug: the weights are the scores divided by their sum, without exp (the output follows from them)
functions: []
questions: [by_hand]
causes: [cause_by_hand_no_exp]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [0.0000, 0.6667, 0.3333]
output = [2.6667, 0.6667]
"""
