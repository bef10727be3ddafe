"""The digits data set (bundled with scikit-learn: 1797 8x8 grey images of the digits 0-9; nothing is downloaded)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Dataset", "load_digits_split"]


@dataclass(frozen=True)
class Dataset:
    """Standardized features (float32) and integer labels, split into train and test."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def num_features(self) -> int:
        return self.x_train.shape[1]

    @property
    def num_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1


def load_digits_split(test_fraction: float = 0.25, seed: int = 0) -> Dataset:
    """Digits, shuffled with seed, the last test_fraction held out; features scaled by the training set's moments."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x, y = d.data.astype(np.float64), d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    x, y = x[order], y[order]
    n_test = int(round(len(y) * test_fraction))
    x_tr, y_tr, x_te, y_te = x[n_test:], y[n_test:], x[:n_test], y[:n_test]
    mu, sd = x_tr.mean(axis=0), x_tr.std(axis=0) + 1e-6
    return Dataset(((x_tr - mu) / sd).astype(np.float32), y_tr, ((x_te - mu) / sd).astype(np.float32), y_te)
