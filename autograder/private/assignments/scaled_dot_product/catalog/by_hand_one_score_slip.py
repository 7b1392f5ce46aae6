"""
bug: one dot product miscomputed (q . k_3 = 3 instead of 2), then the softmax and the output done right on it
functions: []
questions: [by_hand]
causes: [cause_by_hand_one_score, cause_by_hand_weights_follow, cause_by_hand_output_follow]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 2.1213]
weights = [0.0381, 0.6443, 0.3177]
output = [2.6151, 0.6734]
"""
