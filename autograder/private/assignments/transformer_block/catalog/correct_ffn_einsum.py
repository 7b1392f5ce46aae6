"""
correct: the feed-forward network written with torch.einsum over the two layers' weights (x W1^T + b1, ReLU, then W2), no call of the layers themselves
functions: [FeedForward]
questions: []
idiom: torch.einsum("...d,fd->...f", x, self.linear1.weight) + self.linear1.bias
"""

import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        h = torch.einsum("...d,fd->...f", x, self.linear1.weight) + self.linear1.bias  # (..., d_ff)
        h = h.clamp(min=0)  # ReLU
        return torch.einsum("...f,df->...d", h, self.linear2.weight) + self.linear2.bias  # (..., D)
