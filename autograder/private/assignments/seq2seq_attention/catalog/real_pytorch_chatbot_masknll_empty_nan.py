"""
bug: the mean of the selected real positions is NaN when there is none (an empty masked_select), and log of the softmax's probabilities
functions: [masked_loss]
questions: [masked_loss]
causes: [cause_lab_loss_empty_nan]
source: PyTorch tutorials, Chatbot Tutorial, function maskNLLLoss, https://pytorch.org/tutorials/beginner/chatbot_tutorial.html
idiom: crossEntropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1)); loss = crossEntropy.masked_select(mask).mean() on the decoder's softmax output; here over (B, T) positions from logits
"""
import torch


def masked_loss(logits, targets, mask):
    inp = torch.softmax(logits, dim=-1)
    crossEntropy = -torch.log(torch.gather(inp, 2, targets.unsqueeze(-1)).squeeze(-1))
    return crossEntropy.masked_select(mask).mean()
