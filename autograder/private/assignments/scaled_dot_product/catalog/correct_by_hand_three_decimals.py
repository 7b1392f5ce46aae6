"""
correct: every number rounded to exactly 3 decimals (each step computed from unrounded numbers)
functions: []
questions: []
"""
BY_HAND_CELL = """\
scores = [0, 2.828, 1.414]
weights = [0.045, 0.768, 0.187]
output = [3.117, 0.419]
"""
