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


class _Residual(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


def convmixer():
    """ConvMixer-256/8 (Trockman and Kolter, "Patches Are All You Need?"):
    a 4x4 patch embedding to 256 channels, eight blocks of a residual 9x9
    depthwise convolution and a 1x1 pointwise one, each with GELU and batch
    norm, then global pooling and 10 classes (input 3,64,64)."""
    dim, depth, k, p = 256, 8, 9, 4
    blocks = [nn.Sequential(_Residual(nn.Sequential(nn.Conv2d(dim, dim, k, groups=dim, padding=k // 2), nn.GELU(),
                                                     nn.BatchNorm2d(dim))),
                            nn.Conv2d(dim, dim, 1), nn.GELU(), nn.BatchNorm2d(dim)) for _ in range(depth)]
    return nn.Sequential(nn.Conv2d(3, dim, p, stride=p), nn.GELU(), nn.BatchNorm2d(dim), *blocks,
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, 10))


def gpt_encoder():
    """A GPT-style stack: four pre-norm Transformer layers (layer norm before
    attention and before the feed-forward), d_model 384, 6 heads,
    feed-forward 1536 with GELU, dropout 0.1 (input SEQ,384; the loss is MSE
    against a random target)."""
    layer = nn.TransformerEncoderLayer(d_model=384, nhead=6, dim_feedforward=1536, dropout=0.1, activation="gelu",
                                       batch_first=True, norm_first=True)
    return nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)


def narrow_deep():
    """A per-op overhead probe: 48 residual blocks of a 16-wide linear layer,
    layer norm and ReLU, then 10 classes (input 16). At the small batch sizes
    it is measured at every op takes microseconds of arithmetic, so its step
    time is the framework's cost per op, which whole models confound with
    the per-byte prices of their small ops."""
    return nn.Sequential(*[_Residual(nn.Sequential(nn.Linear(16, 16), nn.LayerNorm(16), nn.ReLU()))
                           for _ in range(48)], nn.Linear(16, 10))
