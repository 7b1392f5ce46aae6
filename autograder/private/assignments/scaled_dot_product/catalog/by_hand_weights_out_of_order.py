"""
bug: the right weights typed from largest to smallest, not in the keys' order (the output computed from the right ones)
functions: []
questions: [by_hand]
causes: [cause_by_hand_order, cause_by_hand_output_right_alone]
"""
BY_HAND_CELL = """\
scores = [0.0000, 2.8284, 1.4142]
weights = [0.7679, 0.1867, 0.0454]
output = [3.1171, 0.4188]
"""
