"""
correct: one query's rows [[...]], a tuple, ints, a signed zero, six decimals and comments between the lines
functions: []
questions: []
"""
BY_HAND_CELL = """\
scores = (-0.0, 2.828427, 1.414214)  # q . k_j / sqrt(2)
# the weights, a softmax over the three keys
weights = [[0.045392, 0.767937, 0.186671]]
output = [[3.117138, 0.418734]]  # sum_j w_j v_j
"""
