"""
bug: the drill names `projected` (what the faulty line makes) and the shape it should have, not the tensor that enters the product with the wrong shape
functions: []
questions: [shapes_drill]
causes: [cause_drill_tensor_made, cause_drill_shape_batch]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "projected"
right_shape = ("batch_size", "T_enc", "d_s")
fix = "transpose"
"""
