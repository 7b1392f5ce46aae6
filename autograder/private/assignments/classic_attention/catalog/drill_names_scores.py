"""
bug: the drill names `scores`, where the error shows up, not the tensor that enters the product with the wrong shape
functions: []
questions: [shapes_drill]
causes: [cause_drill_tensor_later, cause_drill_shape_batch]
"""
SHAPES_DRILL_CELL = """\
wrong_tensor = "scores"
right_shape = ("batch_size", "T_dec", "T_enc")
fix = "transpose"
"""
