"""
bug: the output is the value of the key with the largest weight (hard attention), not the weighted average
functions: []
questions: [by_hand]
causes: [cause_by_hand_hard]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [0.0454, 0.7679, 0.1867]
output = [4, 0]
"""
