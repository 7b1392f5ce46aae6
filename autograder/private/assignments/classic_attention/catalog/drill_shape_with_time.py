"""
bug: the drill's right shape for W puts the encoder's time axis where d_h belongs
functions: []
questions: [shapes_drill]
causes: [cause_drill_shape_other]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "W"
right_shape = ("T_enc", "d_s")
fix = "transpose"
"""
