"""
bug: the drill's right_shape is the shape W already has, (d_s, d_h), not the one the product needs
functions: []
questions: [shapes_drill]
causes: [cause_drill_shape_as_it_is]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "W"
right_shape = ("d_s", "d_h")
fix = "transpose"
"""
