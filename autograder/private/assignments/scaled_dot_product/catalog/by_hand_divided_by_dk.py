"""
bug: the scores are divided by d_k = 2 instead of sqrt(d_k) (the later steps follow from them)
functions: []
questions: [by_hand]
causes: [cause_by_hand_divided_by_dk]
"""
BY_HAND_CELL = """\
scores = [0, 2, 1]
weights = [0.0900, 0.6652, 0.2447]
output = [2.7510, 0.5795]
"""
