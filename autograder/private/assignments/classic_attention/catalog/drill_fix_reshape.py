"""
bug: the drill's fix is a reshape, which makes the sizes fit and mixes up the features (the bug hidden, not fixed)
functions: []
questions: [shapes_drill]
causes: [cause_drill_fix_reshape]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "W"
right_shape = ("d_h", "d_s")
fix = "reshape"
"""
