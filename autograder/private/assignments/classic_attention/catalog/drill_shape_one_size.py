"""
bug: the drill's right shape gives only the size that must come first (d_h), not the whole shape of W
functions: []
questions: [shapes_drill]
causes: [cause_drill_shape_other]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "W"
right_shape = ("d_h",)
fix = "transpose"
"""
