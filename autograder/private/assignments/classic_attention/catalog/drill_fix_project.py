"""
bug: the drill names W and its right shape but calls the fix a projection: nothing new is projected, W only has to be used transposed
functions: []
questions: [shapes_drill]
causes: [cause_drill_fix_project]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "W"
right_shape = ("d_h", "d_s")
fix = "project"
"""
