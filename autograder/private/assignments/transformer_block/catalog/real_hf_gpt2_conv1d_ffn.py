"""
bug: HuggingFace GPT-2's Conv1D layers in the feed-forward network: their weights are stored transposed, (in, out), so the parameters do not have nn.Linear's shapes (out, in) and the grader's cannot be loaded
functions: [FeedForward]
questions: [feed_forward, training_run]
causes: [cause_tb_weight_transposed, cause_tb_parameter_names]
source: huggingface/transformers, pytorch_utils.py (Conv1D: weight (nx, nf), torch.addmm(bias, x.view(-1, x.size(-1)), weight)) and models/gpt2/modeling_gpt2.py (GPT2MLP: c_fc, act, c_proj), https://github.com/huggingface/transformers/blob/main/src/transformers/pytorch_utils.py
idiom: nn.Parameter(torch.empty(in_features, out_features)) applied with torch.addmm(bias, x.view(-1, n_in), weight)
"""

import torch
from torch import nn


class FeedForward(nn.Module):
    class _Conv1D(nn.Module):
        def __init__(self, n_out, n_in):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
            self.bias = nn.Parameter(torch.zeros(n_out))

        def forward(self, x):
            shape = x.shape[:-1] + (self.weight.shape[1],)
            return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = self._Conv1D(d_ff, d_model)
        self.linear2 = self._Conv1D(d_model, d_ff)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))
