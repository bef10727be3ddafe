"""The training job: the model's gradient is right, data-parallel training over W ranks equals one rank's training,
quantized (SwitchML block floating point) aggregation reaches the float all-reduce's accuracy within the tolerance,
real host collectives train identically, and the DDP hook (skipped without torch)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from experiments.train import ACCURACY_TOLERANCE
from worker.host.peers import socketpair_mesh
from worker.host.ring import Ring
from worker.training.allreduce_sim import LockstepAllReduce, bfp_sum, float_sum
from worker.training.data import load_digits_split
from worker.training.model import MLP
from worker.training.trainer import TrainConfig, train

DATA = load_digits_split()


def run_ranks(world: int, make_allreduce, cfg: TrainConfig) -> list:
    out: list = [None] * world

    def go(r: int) -> None:
        out[r] = train(make_allreduce(r), r, world, DATA, cfg)
    threads = [threading.Thread(target=go, args=(r,)) for r in range(world)]
    [t.start() for t in threads]
    [t.join(120) for t in threads]
    return out


def test_data_is_bundled_split_and_standardized() -> None:
    assert DATA.x_train.shape == (1348, 64) and DATA.x_test.shape == (449, 64) and DATA.num_classes == 10
    assert abs(float(DATA.x_train.mean())) < 1e-3


def test_gradient_matches_finite_differences() -> None:
    m = MLP(64, 10, hidden=8, seed=3)
    x, y = DATA.x_train[:16], DATA.y_train[:16]
    _, g = m.loss_and_grad(x, y, 16.0)
    p0 = m.params.astype(np.float64).copy()
    rng = np.random.default_rng(0)
    for i in rng.choice(m.size, 12, replace=False):
        h = 1e-2
        m.params = (p0 + h * np.eye(1, m.size, i).ravel()).astype(np.float32)
        lp, _ = m.loss_and_grad(x, y, 16.0)
        m.params = (p0 - h * np.eye(1, m.size, i).ravel()).astype(np.float32)
        lm, _ = m.loss_and_grad(x, y, 16.0)
        assert g[i] == pytest.approx((lp - lm) / (2 * h), abs=2e-3)


def test_data_parallel_equals_single_rank_and_learns() -> None:
    cfg = TrainConfig(epochs=6)
    one = run_ranks(1, LockstepAllReduce(1).for_rank, cfg)[0]
    four = run_ranks(4, LockstepAllReduce(4).for_rank, cfg)
    assert all(np.allclose(h.params, four[0].params) for h in four)  # every rank holds the same model
    assert np.allclose(one.params, four[0].params, atol=1e-4)  # summing shard gradients = the global batch's
    assert four[0].epochs[-1].test_accuracy > 0.9
    assert four[0].epochs[-1].train_loss < four[0].epochs[0].train_loss / 3


def test_quantized_aggregation_reaches_float_accuracy_within_tolerance() -> None:
    cfg = TrainConfig(epochs=8)
    fl = run_ranks(4, LockstepAllReduce(4, float_sum).for_rank, cfg)[0]
    q = run_ranks(4, LockstepAllReduce(4, bfp_sum).for_rank, cfg)[0]
    assert not np.array_equal(fl.params, q.params)  # quantization did change the arithmetic ...
    assert abs(fl.epochs[-1].test_accuracy - q.epochs[-1].test_accuracy) <= ACCURACY_TOLERANCE  # ... not the result
    assert q.epochs[-1].test_accuracy > 0.9


def test_training_over_the_ring_collective() -> None:
    links = socketpair_mesh(3)
    rings = [Ring(r, 3, links[r]) for r in range(3)]
    hist = run_ranks(3, lambda r: rings[r].allreduce, TrainConfig(epochs=3))
    ref = run_ranks(3, LockstepAllReduce(3).for_rank, TrainConfig(epochs=3))[0]
    assert all(np.allclose(h.params, ref.params, atol=1e-5) for h in hist)
    assert hist[0].epochs[-1].comm_s > 0


@pytest.mark.torch
def test_ddp_comm_hook_averages_buckets_through_a_collective() -> None:
    torch = pytest.importorskip("torch")
    from worker.training.torch_hook import collective_hook

    links = socketpair_mesh(2)
    rings = [Ring(r, 2, links[r]) for r in range(2)]
    out: list = [None, None]

    class Bucket:
        def __init__(self, t):
            self.t = t

        def buffer(self):
            return self.t

    def go(r: int) -> None:
        out[r] = collective_hook(rings[r], Bucket(torch.full((5,), float(r + 1)))).wait()
    threads = [threading.Thread(target=go, args=(r,)) for r in range(2)]
    [t.start() for t in threads]
    [t.join(30) for t in threads]
    assert out[0].tolist() == out[1].tolist() == [1.5] * 5


def test_time_to_accuracy_stops_at_the_first_evaluation_that_reaches_it() -> None:
    cfg = TrainConfig(epochs=10, eval_every=3, stop_at=0.9, hidden=32)
    hist = run_ranks(2, LockstepAllReduce(2).for_rank, cfg)
    for h in hist:
        steps = [r.step for r in h.epochs]
        assert steps == list(range(3, 3 * len(steps) + 1, 3))  # every third step
        assert h.epochs[-1].test_accuracy >= 0.9 > max(r.test_accuracy for r in h.epochs[:-1])
        assert steps[-1] < 10 * (len(DATA.y_train) // cfg.global_batch)  # stopped early
    assert np.array_equal(hist[0].params, hist[1].params)
