"""
bug: the output averages the keys instead of the values
functions: []
questions: [by_hand]
causes: [cause_by_hand_keys_for_values]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [0.0454, 0.7679, 0.1867]
output = [1.5358, 0.3734]
"""
