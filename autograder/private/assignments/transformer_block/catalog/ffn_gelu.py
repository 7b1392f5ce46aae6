"""
bug: GELU between the two linear layers (GPT-2's and nanoGPT's MLP) instead of the contract's ReLU
functions: [FeedForward]
questions: [feed_forward]
causes: [cause_tb_gelu, cause_tb_run_parts]
source: karpathy/nanoGPT, model.py (MLP: c_fc, nn.GELU(), c_proj, dropout), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: an MLP of two linear layers with nn.GELU() between them
"""

from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.gelu = nn.GELU()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.gelu(self.linear1(x)))
