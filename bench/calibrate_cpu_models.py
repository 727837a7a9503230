"""Models of bench/calibrate_cpu.py that torchvision does not have, written
with torch alone, as module:callable specs for scripts/dplace-export-torch
(`bench/calibrate_cpu_models.py:mlp`). Each is small enough that its
training step takes a fraction of a second on a two-core CPU."""
import torch.nn as nn


def mlp():
    """A multilayer perceptron: 1024 inputs, three hidden layers of 2048 with
    ReLU, 10 classes (input 1024)."""
    return nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10))


def vgg_small():
    """A VGG-like network for 32x32 images: three stages of two 3x3
    convolutions with ReLU (64, 128, 256 channels), each followed by a 2x2
    max pool, then two fully connected layers (input 3,32,32)."""
    layers, cin = [], 3
    for cout in (64, 128, 256):
        layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(),
                   nn.MaxPool2d(2)]
        cin = cout
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(256 * 4 * 4, 512), nn.ReLU(), nn.Linear(512, 10))


def transformer_wide():
    """A two-layer Transformer encoder, d_model 512, 8 heads, feed-forward
    2048, dropout 0.1 (input SEQ,512; the loss is MSE against a random
    target)."""
    layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
