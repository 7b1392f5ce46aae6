"""
bug: the scores rounded to 1 decimal before the softmax (the later steps follow from them)
functions: []
questions: [by_hand]
causes: [cause_by_hand_rounded_scores, cause_by_hand_few_decimals, cause_by_hand_output_follow]
"""
BY_HAND_CELL = """\
scores = [0, 2.8, 1.4]
weights = [0.0465, 0.7649, 0.1886]
output = [3.1060, 0.4237]
"""
