"""What this assignment declares about itself (`autograder.declarations`)."""

# The shapes drill's typed cell (`autograder.judge.by_hand`: words, never run): the names of
# `broken_general_attention` (a kit test holds this list to the provided function's names),
# the contract's size symbols, the three kinds of fix.
TYPED = {
    "shapes_drill": {
        "tag": "kit-shapes-drill",
        "targets": ["wrong_tensor", "right_shape", "fix"],
        "words": {
            "wrong_tensor": [
                "decoder_states",
                "encoder_states",
                "W",
                "mask",
                "projected",
                "scores",
                "weights",
                "context",
            ],
            "right_shape": ["batch_size", "T_dec", "T_enc", "d_s", "d_h", "d_attn"],
            "fix": ["transpose", "reshape", "project"],
        },
        "shape": "right_shape",
    },
}
