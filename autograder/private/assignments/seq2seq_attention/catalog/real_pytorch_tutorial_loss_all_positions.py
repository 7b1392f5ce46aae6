"""
bug: the mean cross-entropy over every position, padding included (the mask is not used)
functions: [masked_loss]
questions: [masked_loss, training_run]
causes: [cause_lab_loss_mean_all, cause_lab_loss_padding_counts, cause_lab_run_parts]
source: PyTorch tutorials, NLP From Scratch: Translation with a Sequence to Sequence Network and Attention, function train_epoch, https://pytorch.org/tutorials/intermediate/seq2seq_translation_tutorial.html
idiom: loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1)) with criterion = nn.NLLLoss() on log-softmax outputs and no ignore_index; here on logits, so log_softmax first
"""
import torch.nn.functional as F


def masked_loss(logits, targets, mask):
    log_probs = F.log_softmax(logits, dim=-1)
    return F.nll_loss(log_probs.view(-1, log_probs.size(-1)), targets.view(-1))
