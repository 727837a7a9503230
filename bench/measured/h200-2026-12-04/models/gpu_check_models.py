"""Models of the real-GPU check (bench/gpu_check.py), written with torch
alone so that the measuring machine needs no torchvision: a ResNet-18 (the
torchvision architecture: BasicBlocks of two 3x3 convolutions, 64-512
channels), a Transformer encoder (torch.nn's layers) and an LSTM language
model. Used as module:callable specs, `bench/gpu_check_models.py:resnet18`."""
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + idt)


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18():
    """ResNet-18 for 1000 classes (input 3,H,W)."""
    return ResNet18()


def transformer():
    """A four-layer Transformer encoder, d_model 256, 4 heads, feed-forward
    1024 (input SEQ,256; the loss is MSE against a random target)."""
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab, width, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.ModuleList(nn.LSTM(width, width, batch_first=True) for _ in range(layers))
        self.drop = nn.Dropout(0.2)
        self.decoder = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.lstm:
            x = self.drop(layer(x)[0])
        return self.decoder(x).reshape(-1, self.decoder.out_features)


def lstm_lm():
    """A two-layer LSTM language model (PyTorch's word_language_model at its
    medium size: vocabulary 10000, width 650; input SEQ int64 token ids
    below 10000; the loss is cross-entropy over every position, the
    output flattened to [batch x SEQ, 10000]). Each layer is its own module
    so that a placement can split them."""
    return LSTMLanguageModel(10000, 650, 2)
