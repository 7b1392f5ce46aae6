"""Vector-Jacobian products without torch's symbolic-shapes machinery.

`torch.autograd.grad(outputs, inputs, grad_outputs=tensors)` imports
`torch.fx.experimental.symbolic_shapes`, and with it sympy (0.4 s of CPU, once
per process), only to compare shapes. The gradient of sum(output * cotangent)
is the same vector-Jacobian product, bit for bit (the backward of a sum gives
ones, of the product the cotangent itself), so `vjp` takes that road, after
checking each cotangent's shape as torch would. The worker has its own copy
(`autograder.worker.runner`): it may import nothing of the judge.
"""
import torch


def vjp(outputs, inputs, cotangents, allow_unused=True):
    """torch.autograd.grad(outputs, inputs, grad_outputs=cotangents, allow_unused=...)."""
    outputs, cotangents = list(outputs), list(cotangents)
    if len(outputs) != len(cotangents):
        raise ValueError(f"{len(cotangents)} cotangents for {len(outputs)} outputs")
    total = None
    for k, (o, c) in enumerate(zip(outputs, cotangents)):
        if tuple(o.shape) != tuple(c.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{k}] has a shape of {tuple(c.shape)} and "
                               f"output[{k}] has a shape of {tuple(o.shape)}.")
        term = (o * c.to(o.dtype)).sum()
        total = term if total is None else total + term
    if total is None:
        return [None] * len(inputs)
    return torch.autograd.grad(total, list(inputs), allow_unused=allow_unused)
