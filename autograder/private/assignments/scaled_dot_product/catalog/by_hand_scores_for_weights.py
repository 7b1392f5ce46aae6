"""
bug: the output multiplies the values by the scores instead of the weights
functions: []
questions: [by_hand]
causes: [cause_by_hand_scores_for_weights]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [0.0454, 0.7679, 0.1867]
output = [11.3137, 2.8284]
"""
