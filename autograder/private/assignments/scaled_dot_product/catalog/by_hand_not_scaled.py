"""
bug: the scores are the plain dot products q . k_j, not divided by sqrt(d_k) (weights and output follow from them correctly)
functions: []
questions: [by_hand]
causes: [cause_by_hand_not_scaled]
"""
BY_HAND_CELL = """\
scores = [0, 4, 2]
weights = [0.0159, 0.8668, 0.1173]
output = [3.4831, 0.2505]
"""
