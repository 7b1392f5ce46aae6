"""torch's built-in attention, which no graded function may call: the contract both sides
hold to. The worker's operation counter records a call to one of them while it runs
(`autograder.worker.runner`); the reader's source check finds a use of one in the
student's source (`autograder.judge.sourcecheck`). Standard library only."""

FORBIDDEN = ("scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention")
