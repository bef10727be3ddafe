"""The data-parallel training loop over any all-reduce (a callable summing a float32 vector over the ranks)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from worker.training.data import Dataset
from worker.training.model import MLP

__all__ = ["TrainConfig", "EpochRecord", "train"]


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters shared by every rank (they must agree, as in any data-parallel job)."""

    epochs: int = 10
    global_batch: int = 64
    lr: float = 0.1
    hidden: int = 32
    seed: int = 0
    eval_every: int = 0
    """Evaluate on the test set every this many steps (0: at the end of each epoch)."""
    stop_at: float | None = None
    """Stop at the first evaluation whose test accuracy reaches this (time to accuracy); None: run every epoch."""


@dataclass
class EpochRecord:
    """State after one epoch, as every rank sees it (the parameters are identical on every rank)."""

    epoch: int
    """The epoch the evaluation fell in (evaluations every `eval_every` steps share it)."""
    step: int
    train_loss: float
    test_loss: float
    test_accuracy: float
    elapsed_s: float
    """Wall time since training started."""
    comm_s: float
    """Time spent inside the all-reduce so far."""

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


@dataclass
class History:
    epochs: list[EpochRecord] = field(default_factory=list)
    params: np.ndarray | None = None


def train(allreduce: Callable[[np.ndarray], np.ndarray], rank: int, world: int, data: Dataset,
          cfg: TrainConfig = TrainConfig(), *, on_epoch: Callable[[EpochRecord], None] | None = None,
          clock: Callable[[], float] = time.monotonic) -> History:
    """Train with synchronous data-parallel SGD: rank r takes rows r, r+world, ... of each global batch, the
    all-reduce sums the ranks' gradients (each already divided by the global batch size), every rank steps."""
    model = MLP(data.num_features, data.num_classes, cfg.hidden, cfg.seed)
    n = len(data.y_train)
    steps_per_epoch = n // cfg.global_batch
    hist = History()
    start, comm, step = clock(), 0.0, 0
    for epoch in range(1, cfg.epochs + 1):
        order = np.random.default_rng([cfg.seed, epoch]).permutation(n)  # the same on every rank
        losses: list[float] = []
        for s in range(steps_per_epoch):
            batch = order[s * cfg.global_batch:(s + 1) * cfg.global_batch]
            mine = batch[rank::world]
            loss, grad = model.loss_and_grad(data.x_train[mine], data.y_train[mine], cfg.global_batch)
            t0 = clock()
            total = allreduce(np.append(grad, np.float32(loss)))
            comm += clock() - t0
            model.params -= np.float32(cfg.lr) * total[:-1].astype(np.float32)
            losses.append(float(total[-1]))
            step += 1
            last = s == steps_per_epoch - 1
            if (cfg.eval_every and step % cfg.eval_every == 0) or (last and not cfg.eval_every):
                test_loss, acc = model.evaluate(data.x_test, data.y_test)
                rec = EpochRecord(epoch, step, float(np.mean(losses)), test_loss, acc, clock() - start, comm)
                losses = []
                hist.epochs.append(rec)
                if on_epoch is not None:
                    on_epoch(rec)
                if cfg.stop_at is not None and acc >= cfg.stop_at:  # every rank sees the same model: all stop here
                    hist.params = model.params.copy()
                    return hist
    hist.params = model.params.copy()
    return hist
