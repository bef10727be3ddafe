"""N workers' window cores against the reference switch model on a simulated lossy, duplicating, reordering network."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.worker.ina_fixtures import make_job
from tests.worker.ina_netsim import Link, run_allreduce
from tests.worker.ina_refswitch import SwitchModel
from worker.driver import WindowOptions
from worker.switchml.header import Codec
from worker.switchml.window import SwitchUnreachable
from worker.verify import rank_input
from worker.switchml.verify import verify

OPTS = WindowOptions(window=8, timeout=0.02, backoff=2.0, max_timeout=0.1, max_retries=8)
LOSSY = Link(loss=0.05, dup=0.03, latency=0.001, jitter=0.003)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("link", [Link(), LOSSY], ids=["clean", "lossy"])
def test_int32_sums_exact(codec: Codec, n: int, link: Link) -> None:
    job = make_job(n)
    inputs = [rank_input(301, 5, r, "int32") for r in range(n)]  # 38 blocks, last one padded
    res = run_allreduce(job, codec, inputs, mode="int32", options=OPTS, link=link, seed=n)
    expected = np.sum(np.stack(inputs).astype(np.int64), axis=0).astype(np.uint32).view(np.int32)
    for out in res.outputs:
        assert out.dtype == np.int32 and out.tolist() == expected.tolist()
    sw = res.switch.counters
    assert sw["multicast"] == 38
    if link.loss:
        assert sum(w.stats.retransmissions for w in res.windows) > 0
        assert sw["retransmission_answered"] > 0 and sw["retransmission_dropped"] > 0
        assert sum(w.stats.duplicates_ignored for w in res.windows) > 0
    else:
        assert sum(w.stats.retransmissions for w in res.windows) == 0
        assert sw["aggregated"] == 38 * n and sw["received"] == 38 * n


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("link", [Link(), LOSSY], ids=["clean", "lossy"])
def test_float32_within_bound_and_identical_on_all_workers(codec: Codec, n: int, link: Link) -> None:
    job = make_job(n)
    inputs = [rank_input(500, 9, r, "float32") for r in range(n)]
    res = run_allreduce(job, codec, inputs, mode="float32", options=OPTS, link=link, seed=11)
    for out, plan in zip(res.outputs, res.plans):
        verdict = verify(out, inputs, job.num_elems, "float32", plan.agreed)
        assert verdict.ok, verdict.message
        assert out.tobytes() == res.outputs[0].tobytes()
    # 63 data blocks + the extra batch of 8 exponent-only packets
    assert res.switch.counters["multicast"] == 63 + 8


def test_same_seed_same_run(codec: Codec) -> None:
    job = make_job(3)
    inputs = [rank_input(200, 1, r, "float32") for r in range(3)]
    a = run_allreduce(job, codec, inputs, mode="float32", options=OPTS, link=LOSSY, seed=4)
    b = run_allreduce(job, codec, inputs, mode="float32", options=OPTS, link=LOSSY, seed=4)
    assert [w.stats for w in a.windows] == [w.stats for w in b.windows]
    assert a.switch.counters == b.switch.counters


def test_lost_result_is_answered_by_unicast_from_stored_slot(codec: Codec) -> None:
    job = make_job(2)
    dropped: list[int] = []

    def drop_first_result_to_rank0(direction: str, rank: int, data: bytes) -> bool:
        hdr = codec.decode_header(data)
        if direction == "down" and rank == 0 and hdr.packet_id == 0 and not dropped:
            dropped.append(hdr.packet_id)
            return True
        return False

    inputs = [np.arange(16, dtype=np.int32) * (r + 1) for r in range(2)]
    res = run_allreduce(job, codec, inputs, mode="int32", options=OPTS,
                        link=Link(drop_if=drop_first_result_to_rank0))
    assert res.outputs[0].tolist() == (np.arange(16) * 3).tolist()
    assert res.windows[0].stats.retransmissions == 1 and res.windows[1].stats.retransmissions == 0
    assert res.switch.counters["retransmission_answered"] == 1
    assert res.switch.counters["aggregated"] == 4


def test_lost_contribution_is_aggregated_on_retransmission(codec: Codec) -> None:
    job = make_job(2)
    seen: list[int] = []

    def drop_first_data_of_rank1(direction: str, rank: int, data: bytes) -> bool:
        if direction == "up" and rank == 1 and codec.decode_header(data).packet_id == 1 and not seen:
            seen.append(1)
            return True
        return False

    inputs = [np.arange(16, dtype=np.int32) + 100 * r for r in range(2)]
    res = run_allreduce(job, codec, inputs, mode="int32", options=OPTS, link=Link(drop_if=drop_first_data_of_rank1))
    assert res.outputs[1].tolist() == (2 * np.arange(16) + 100).tolist()
    # rank 0 retransmits packet 1 too (its slot is incomplete): the switch drops that one
    assert res.switch.counters["retransmission_dropped"] >= 1
    assert res.switch.counters["aggregated"] == 4


def test_consecutive_runs_continue_set_alternation(codec: Codec) -> None:
    """3 blocks on W=2: slot 1 is used once, so the next run must start slot 1 in set 1. Restarting at set 0 would
    hit a completed cell whose bitmap still holds every worker's bit: the switch answers the stale result."""
    job = make_job(2, size=2)
    opts = WindowOptions(window=2, timeout=0.02, max_timeout=0.05, max_retries=3)
    sw = SwitchModel(codec, [job])
    first = [np.full(24, r + 1, dtype=np.int32) for r in range(2)]
    res1 = run_allreduce(job, codec, first, mode="int32", options=opts, switch=sw)
    assert res1.outputs[0].tolist() == [3] * 24
    nxt = [w.next_first_set() for w in res1.windows]
    assert nxt == [[0, 1], [0, 1]]
    second = [np.full(24, 10 * (r + 1), dtype=np.int32) for r in range(2)]
    res2 = run_allreduce(job, codec, second, mode="int32", options=opts, switch=sw, first_sets=nxt)
    assert res2.outputs[0].tolist() == [30] * 24
    # the wrong continuation returns a stale sum for block 1
    sw_bad = SwitchModel(codec, [job])
    run_allreduce(job, codec, first, mode="int32", options=opts, switch=sw_bad)
    bad = run_allreduce(job, codec, second, mode="int32", options=opts, switch=sw_bad)
    assert bad.outputs[0][8:16].tolist() == [3] * 8


@pytest.mark.parametrize("adaptive", [False, True], ids=["fixed", "adaptive"])
def test_switch_dies_mid_run_raises_within_bounded_time(codec: Codec, adaptive: bool) -> None:
    job = make_job(3)
    inputs = [rank_input(2000, 2, r, "float32") for r in range(3)]
    opts = replace(OPTS, adaptive=adaptive, min_timeout=0.005)
    with pytest.raises(SwitchUnreachable) as exc:
        run_allreduce(job, codec, inputs, mode="float32", options=opts, switch_dies_at=0.05)
    err = exc.value
    assert err.job_id == job.job_id
    if adaptive:
        # the first timeout was the measured RTO (clamped), so the wait lies between the two extreme backoff series
        assert err.transmissions in (opts.max_retries + 1, opts.max_retries + 2)  # + at most one fast retransmit
        assert opts.worst_case_wait(opts.min_timeout) <= err.waited <= opts.give_up_bound()
        assert err.waited < opts.worst_case_wait()  # the RTO (RTT ~1-4 ms here) is below the initial 20 ms
    else:
        assert err.transmissions == opts.max_retries + 1
        assert err.waited == pytest.approx(opts.worst_case_wait(), rel=0.05)
    assert err.last_result_ago is not None
    assert f"(slot {err.slot}, set {err.set})" in str(err) and "last result from the switch arrived" in str(err)


def test_silent_worker_makes_the_others_fail_clearly(codec: Codec) -> None:
    job = make_job(3)
    inputs = [rank_input(100, 2, r, "int32") for r in range(3)]
    with pytest.raises(SwitchUnreachable, match="no result packet from the switch arrived at all") as exc:
        run_allreduce(job, codec, inputs, mode="int32", options=OPTS, silent_ranks=frozenset({2}))
    assert exc.value.packet_id in range(OPTS.window) and exc.value.set == 0


def test_pool_base_offsets_slots(codec: Codec) -> None:
    job = make_job(2, base=100, size=4)
    inputs = [np.ones(64, dtype=np.int32)] * 2
    res = run_allreduce(job, codec, inputs, mode="int32", options=OPTS)
    assert res.outputs[0].tolist() == [2] * 64
    assert res.windows[0].slots == [100, 101, 102, 103]
    assert res.switch.cells[100][1].bitmap == 0b11 and res.switch.cells[100][0].bitmap == 0  # lazily cleared


def test_workers_with_different_windows_get_a_diagnosis(codec: Codec) -> None:
    """Rank 1 runs another window than rank 0: results carry packet ids the other does not expect."""
    job = make_job(2)
    inputs = [np.ones(8 * 20, dtype=np.int32)] * 2
    with pytest.raises(SwitchUnreachable, match="workers disagree on the sequence") as exc:
        run_allreduce(job, codec, inputs, mode="int32", options=OPTS, windows=[4, 2])
    assert exc.value.mismatch is not None and "carried packet_id" in str(exc.value)
