"""The simulator's benchmark at a tiny scale: its inputs and one verified point."""

import numpy as np

from experiments.bench.sim import one, shifted_inputs


def test_shifted_inputs_share_one_sequence_and_differ_per_rank():
    per, size, n = 4, 32, 5
    inputs = shifted_inputs(size, per, n, seed=7)
    assert [x.size for x in inputs] == [size] * n
    assert all(np.shares_memory(inputs[0], x) and not x.flags.writeable for x in inputs)
    for r in range(1, n):
        np.testing.assert_array_equal(inputs[r][: size - per], inputs[r - 1][per:])
        assert not np.array_equal(inputs[r], inputs[r - 1])
    total = np.sum([x.astype(np.int64) for x in inputs], axis=0)
    assert total.min() >= -(2**31) and total.max() < 2**31  # divided by the workers: no sum saturates


def test_one_point_runs_verified_on_a_star_and_on_two_tiers():
    star = one("switchml", 4, 64 * 8, 100.0)
    assert star["verified"] == 1 and star["deliveries"] >= 4 * 8 * 2  # every packet up and its result down
    tiers = one("atp", 8, 64 * 4, 100.0, racks=2)
    assert tiers["verified"] == 1 and tiers["sim_ms"] > 0
