#!/usr/bin/python3
"""PyTorch latency of the architectures in ../shared/models (Debian's python3-torch, run by
bench/model_bench.py). Weights are random: latency does not depend on their values.

    /usr/bin/python3 bench/torch_peer.py MODEL THREADS REPEAT   -> prints the median in ms
"""
import statistics
import sys
import time

import torch
import torchvision


class Encoder(torch.nn.Module):
    """The bert_encoder architecture: embedding + position, 4 post-norm GELU layers, a head."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(1000, 256)
        self.pos = torch.nn.Parameter(torch.randn(1, 128, 256))
        layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, activation="gelu", batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 4)
        self.head = torch.nn.Linear(256, 2)

    def forward(self, ids):
        return self.head(self.enc(self.emb(ids) + self.pos)[:, 0])


def main():
    name, threads, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    if name == "resnet18":
        model, x = torchvision.models.resnet18(), torch.randn(1, 3, 224, 224)
    elif name == "mobilenet_v2":
        model, x = torchvision.models.mobilenet_v2(), torch.randn(1, 3, 224, 224)
    elif name == "bert_encoder":
        model, x = Encoder(), torch.randint(0, 1000, (1, 128))
    else:
        sys.exit(f"unknown model {name}")
    model.eval()
    times = []
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        for _ in range(repeat):
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    print(f"{statistics.median(times) * 1e3:.4f}")


if __name__ == "__main__":
    main()
