"""A two-layer perceptron in numpy whose parameters and gradients are one flat float32 vector (one "bucket")."""

from __future__ import annotations

import numpy as np

__all__ = ["MLP"]


class MLP:
    """64 -> hidden (ReLU) -> classes (softmax), cross-entropy loss; `params` is the flat parameter vector."""

    def __init__(self, num_features: int, num_classes: int, hidden: int = 32, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.shapes = [(num_features, hidden), (hidden,), (hidden, num_classes), (num_classes,)]
        parts = [rng.standard_normal((num_features, hidden)) * np.sqrt(2 / num_features), np.zeros(hidden),
                 rng.standard_normal((hidden, num_classes)) * np.sqrt(1 / hidden), np.zeros(num_classes)]
        self.params = np.concatenate([p.ravel() for p in parts]).astype(np.float32)

    @property
    def size(self) -> int:
        return self.params.size

    def _unpack(self, flat: np.ndarray) -> list[np.ndarray]:
        out, i = [], 0
        for s in self.shapes:
            k = int(np.prod(s))
            out.append(flat[i:i + k].reshape(s))
            i += k
        return out

    def logits(self, x: np.ndarray) -> np.ndarray:
        w1, b1, w2, b2 = self._unpack(self.params)
        return np.maximum(x @ w1 + b1, 0) @ w2 + b2

    def loss_and_grad(self, x: np.ndarray, y: np.ndarray, scale: float) -> tuple[float, np.ndarray]:
        """Sum of the cross-entropy over (x, y) divided by `scale` (the global batch size), and its gradient."""
        w1, b1, w2, b2 = self._unpack(self.params)
        h_pre = x @ w1 + b1
        h = np.maximum(h_pre, 0)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).sum() / scale)
        dz = p
        dz[np.arange(len(y)), y] -= 1
        dz /= scale
        gw2, gb2 = h.T @ dz, dz.sum(axis=0)
        dh = (dz @ w2.T) * (h_pre > 0)
        gw1, gb1 = x.T @ dh, dh.sum(axis=0)
        return loss, np.concatenate([g.ravel() for g in (gw1, gb1, gw2, gb2)]).astype(np.float32)

    def evaluate(self, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """Mean cross-entropy and accuracy on (x, y)."""
        z = self.logits(x)
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(y)), y].mean()), float((z.argmax(axis=1) == y).mean())
