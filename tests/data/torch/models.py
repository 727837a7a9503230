"""Small PyTorch models for tests/test_export_torch.py (module:callable specs)."""
import torch
import torch.nn as nn


class Small(nn.Module):
    """conv 3->8 (3x3, padding 1, bias), ReLU, flatten, linear 512->10: FLOPs
    small enough to check by hand at an 8x8 input."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(torch.flatten(torch.relu(self.conv(x)), 1))


def small():
    return Small()


def small_frozen():
    """Small with its convolution frozen (requires_grad False): a trained head
    on a frozen backbone."""
    m = Small()
    m.conv.requires_grad_(False)
    return m


def encoder2():
    """A two-layer transformer encoder (d_model 32, 4 heads, feed-forward 64)."""
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.1, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2)


class DataDependent(nn.Module):
    """Python control flow on a tensor's value: make_fx cannot trace it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            return y * 2
        return y


def data_dependent():
    return DataDependent()


def not_a_module():
    return 42


def bad_tokens():
    """An embedding of 10 tokens: token ids of 10 and over (--input-high past
    10) make the real step fail (IndexError), while tracing on fake tensors,
    which never look at values, succeeds."""
    return nn.Sequential(nn.Embedding(10, 8), nn.Flatten(), nn.Linear(4 * 8, 2))


def raises():
    raise RuntimeError("no weights at /nonexistent")


class Huge(nn.Module):
    """Asks for a 1 PiB scratch tensor (torch.empty: never touched, and past
    any machine's address space), so the real step runs out of memory at
    once, while tracing on fake tensors allocates nothing and succeeds."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        scratch = x.new_empty((1 << 48,))
        return self.fc(x) + scratch[:1]


def huge():
    return Huge()


def chain():
    """Four linear layers with ReLUs between them (16 features in, 8 out):
    eight modules in a row, enough to split and shuffle in many ways at a
    cost of microseconds per step."""
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 8), nn.Tanh())


class TinyLM(nn.Module):
    """An embedding, a one-layer LSTM and a linear decoder over 50 tokens."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.lstm = nn.LSTM(8, 8, batch_first=True)
        self.decoder = nn.Linear(8, 50)

    def forward(self, tokens):
        return self.decoder(self.lstm(self.embed(tokens))[0]).reshape(-1, 50)


def tiny_lm():
    return TinyLM()
