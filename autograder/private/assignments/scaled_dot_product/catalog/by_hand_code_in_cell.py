"""
bug: the cell computes its numbers (2 / math.sqrt(2)) instead of holding them: unreadable, nothing counts
functions: []
questions: [by_hand]
causes: [cause_by_hand_rule]
"""
BY_HAND_CELL = """\
scores = [0, 4 / math.sqrt(2), 2 / math.sqrt(2)]
weights = [0.0454, 0.7679, 0.1867]
output = [3.1171, 0.4188]
"""
