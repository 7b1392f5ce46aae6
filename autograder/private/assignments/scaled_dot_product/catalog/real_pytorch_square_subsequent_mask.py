"""
correct: nn.Transformer.generate_square_subsequent_mask's float mask (-inf above the diagonal, 0 elsewhere) turned into the contract's bool mask by comparing with 0
functions: [causal_mask]
questions: []
source: PyTorch, torch/nn/modules/transformer.py (Transformer.generate_square_subsequent_mask / _generate_square_subsequent_mask), https://github.com/pytorch/pytorch/blob/main/torch/nn/modules/transformer.py
idiom: torch.triu(torch.full((sz, sz), float("-inf"), device=device), diagonal=1), then == 0 for True on and below the diagonal
"""
import torch


def causal_mask(seq_len, device=None):
    additive = torch.triu(torch.full((seq_len, seq_len), float("-inf"), device=device), diagonal=1)
    return additive == 0
