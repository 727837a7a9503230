"""Models of bench/bench_torch.py that torchvision does not have, for
scripts/dplace-export-torch (MODULE:CALLABLE)."""
import torch.nn as nn


def transformer_encoder():
    """A BERT-Large-sized Transformer encoder: 12 layers of width 1024, 16
    heads, a 4096-wide feed-forward, dropout 0.1, over a [batch, sequence,
    1024] input (--input-shape SEQ,1024)."""
    layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=12)
