"""
bug: the drill's answers typed as bare names (wrong_tensor = W), which the grader does not run: unreadable, nothing counts
functions: []
questions: [shapes_drill]
causes: [cause_drill_rule]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = W
right_shape = (d_h, d_s)
fix = "transpose"
"""
