"""ATP hosts end to end in one process: workers' windows, the PS and atp.p4 on the engine (topo.inprocess), with
loss, several jobs sharing the pool, overflow, int32, no switch aggregation; and the PS core on its own."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.paths import ROOT
from topo.inprocess import InProcessNetwork, make_jobs
from worker.atp.header import ACK, COLLISION, ECN, FLOAT, OVERFLOW, RAW, RESEND, AtpCodec, AtpHeader
from worker.atp.ps import PsCore
from worker.atp.worker import ATP_WINDOW, AtpOptions, AtpWindow, AtpWorker, FixedPointPlan, aggregator_map
from worker.driver import WindowOptions
from worker.job import PoolRange
from worker.protocols import PROTOCOLS
from worker.transport import FakeClock, FakeTransport
from worker.verify import verify_fixed_point

N = 16


@functools.cache
def compiled():  # noqa: ANN201 - compiler.CompileResult
    import compiler

    src = ROOT / "p4src" / "atp.p4"
    return compiler.compile_file(str(src), defines={"ATP_NUM_ELEMS": str(N), "ATP_NUM_AGTR": "256"})


def program() -> dict:
    return compiled().json


def network(jobs, **kw) -> InProcessNetwork:
    """atp.p4 (N elements, 256 aggregators) in process, programmed by the controller."""
    return InProcessNetwork(program(), jobs, p4info=compiled().p4info, **kw)


def inputs(jobs, size, seed, dtype="float32", scale=1.0):
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return {j.job_id: [rng.integers(-2**31, 2**31, size=size).astype(np.int32) for _ in j.workers] for j in jobs}
    return {j.job_id: [(rng.standard_normal(size) * scale).astype(np.float32) for _ in j.workers] for j in jobs}


def check(results, ins, dtype="float32"):
    for jid, run in results.items():
        for x in run.results:
            v = verify_fixed_point(x, ins[jid], dtype, AtpOptions().scale_bits)
            assert v.ok, (jid, v.message)


@pytest.mark.parametrize("loss,seed", [(0.0, 1), (0.01, 2), (0.05, 3)])
def test_one_job_every_worker_gets_the_sum(loss, seed):
    jobs = make_jobs(1, 4, N, PoolRange(0, 64), ps=True)
    net = network(jobs, loss=loss, seed=seed)
    ins = inputs(jobs, 3000, seed)
    res = net.allreduce(ins)
    check(res, ins)
    ps = res[1].ps.stats
    assert ps.completed == -(-3000 // N)
    if loss == 0:
        assert ps.switch_fraction == 1.0 and ps.duplicates == 0
        assert all(w.stats.retransmissions == 0 for w in res[1].windows)
    else:
        assert net.dropped > 0 and 0.5 < ps.switch_fraction < 1.0


def test_jobs_sharing_an_oversubscribed_pool_all_complete_through_the_ps():
    jobs = make_jobs(3, 3, N, PoolRange(0, 24), ps=True)  # 3 jobs x W=16 positions on 24 aggregators
    net = network(jobs, loss=0.02, seed=11)
    ins = inputs(jobs, 4000, 11)
    res = net.allreduce(ins)
    check(res, ins)
    collided = sum(r.ps.stats.collisions for r in res.values())
    assert collided > 0
    assert all(r.ps.stats.completed == -(-4000 // N) for r in res.values())
    # collisions move window positions to other aggregators, identically on every worker of a job
    for r in res.values():
        maps = {tuple(w.agtr) for w in r.windows}
        assert len(maps) == 1


def test_consecutive_allreduces_continue_sequence_numbers():
    jobs = make_jobs(1, 2, N, PoolRange(0, 32), ps=True)
    net = network(jobs, loss=0.02, seed=4)
    for k in range(3):
        ins = inputs(jobs, 700 + k, 10 + k)
        check(net.allreduce(ins), ins)
    assert net.ps_host.cores[1].stats.completed == sum(-(-(700 + k) // N) for k in range(3))


def test_overflow_resends_raw_and_the_result_is_float_exact():
    jobs = make_jobs(1, 3, N, PoolRange(0, 32), ps=True)
    net = network(jobs, loss=0.02, seed=5)
    ins = inputs(jobs, 1500, 5, scale=1000.0)  # |x| * 2^20 beyond int32 for many blocks
    res = net.allreduce(ins)
    check(res, ins)
    assert res[1].ps.stats.raw_sequences > 0
    assert any(w.stats.raw_resends for w in res[1].windows)


def test_int32_sums_are_exact_modulo_2_32():
    jobs = make_jobs(1, 4, N, PoolRange(0, 32), ps=True)
    net = network(jobs, loss=0.01, seed=6)
    ins = inputs(jobs, 1000, 6, dtype="int32")
    check(net.allreduce(ins, "int32"), ins, "int32")


def test_without_switch_aggregation_the_ps_does_it_all():
    jobs = make_jobs(2, 3, N, PoolRange(0, 32), ps=True)
    net = network(jobs, loss=0.02, seed=7, switch_aggregation=False)
    ins = inputs(jobs, 2000, 7)
    res = net.allreduce(ins)
    check(res, ins)
    assert all(r.ps.stats.contributions_in_switch == 0 for r in res.values())


def test_aggregator_map_is_distinct_within_the_job_and_in_range():
    (job,) = make_jobs(1, 2, N, PoolRange(100, 40), ps=True)
    m = aggregator_map(job, 32)
    assert len(set(m)) == 32 and all(100 <= a < 140 for a in m)


# --- the PS core alone ---------------------------------------------------------------------------------------


def _ps(n=3):
    (job,) = make_jobs(1, n, N, PoolRange(0, 32), ps=True)
    return job, PsCore(job, N)


def _pkt(bits, seq=1, flags=0, agtr=5, job=1):
    return AtpHeader(bitmap0=bits, flags=flags, job_id=job, seq=seq, agtr=agtr)


def test_ps_merges_partials_exactly_once_in_any_order():
    job, ps = _ps(3)
    a, b, c = (np.full(N, v, dtype=np.int32) for v in (1, 10, 100))
    assert ps.on_packet(_pkt(0b001), a) == []
    assert ps.on_packet(_pkt(0b001, flags=RESEND), a) == []  # duplicate
    assert ps.on_packet(_pkt(0b011), a + b) == []  # overlaps what is in: ignored
    assert ps.on_packet(_pkt(0b010, flags=COLLISION), b) == []
    assert ps.on_packet(_pkt(0b110), b + c) == []  # overlap again
    (ack,) = ps.on_packet(_pkt(0b100), c)
    h, v = ack
    assert h.flags & ACK and h.flags & COLLISION and h.seq == 1 and h.agtr == 5 and h.agtr_next != 5
    assert list(v) == [111] * N
    assert ps.stats.duplicates == 1 and ps.stats.overlaps_ignored == 2 and ps.stats.completed == 1
    # a late packet of a completed sequence gets the same ACK again
    assert ps.on_packet(_pkt(0b001), a) == [ack]


def test_ps_asks_for_a_raw_resend_on_saturation_and_sums_raw_floats():
    job, ps = _ps(2)
    sat = np.full(N, 2**31 - 1, dtype=np.int32)
    (req,) = ps.on_packet(_pkt(0b11, flags=OVERFLOW), sat)
    assert req[0].flags == ACK | OVERFLOW
    x = np.linspace(-1e9, 1e9, N).astype(np.float32)
    y = np.linspace(3e9, -3e9, N).astype(np.float32)
    assert ps.on_packet(_pkt(0b01, flags=RAW | FLOAT), x.view(np.int32)) == []
    assert ps.on_packet(_pkt(0b01, flags=RAW | FLOAT | RESEND), x.view(np.int32)) == []  # duplicate raw
    (fin,) = ps.on_packet(_pkt(0b10, flags=RAW | FLOAT), y.view(np.int32))
    assert fin[0].flags & (ACK | RAW | FLOAT) == ACK | RAW | FLOAT
    assert np.array_equal(fin[1].view(np.float32), (x.astype(np.float64) + y).astype(np.float32))
    assert ps.stats.raw_sequences == 1


def test_ps_asks_for_raw_when_a_running_sum_saturated_even_if_the_total_fits():
    """Merged one by one, -1.38e9 + -0.69e9 + -1.73e9 passes INT32_MIN before +2.5e9 brings the total back in
    range: the saturated sum is wrong, so the PS must ask for the raw values (found by the soak, seed 473)."""
    job, ps = _ps(4)
    vals = [-1380866580, -691253205, -1733221437, 2147000000]
    for k, v in enumerate(vals[:-1]):
        assert ps.on_packet(_pkt(1 << k, flags=RESEND), np.full(N, v, dtype=np.int32)) == []
    (req,) = ps.on_packet(_pkt(0b1000, flags=RESEND), np.full(N, vals[-1], dtype=np.int32))
    assert req[0].flags == ACK | OVERFLOW
    for k, v in enumerate(vals):
        out = ps.on_packet(_pkt(1 << k, flags=RAW), np.full(N, v, dtype=np.int32))
    (fin,) = out
    assert list(fin[1]) == [np.int64(sum(vals)).astype(np.int32)] * N and fin[0].flags & RAW


def test_ps_copies_ecn_into_the_ack():
    job, ps = _ps(1)
    (ack,) = ps.on_packet(_pkt(0b1, flags=ECN), np.zeros(N, dtype=np.int32))
    assert ack[0].flags & ECN


# --- the window core alone -----------------------------------------------------------------------------------


def test_aimd_halves_on_ecn_and_grows_by_one_per_window():
    (job,) = make_jobs(1, 1, N, PoolRange(0, 64), ps=True)
    plan = FixedPointPlan(np.zeros(N * 200, dtype=np.float32), N, "float32", 20)
    win = AtpWindow(plan, job, 0, 1, aggregator_map(job, 16), WindowOptions(window=16), initial_cwnd=8)
    sent = win.start(0.0)
    assert len(sent) == 8 and win.cwnd == 8
    zeros = np.zeros(N, dtype=np.int32)

    def ack(h, ecn=False):
        return win.on_ack(AtpHeader(bitmap0=1, flags=ACK | (ECN if ecn else 0), job_id=1, seq=h.seq, agtr=h.agtr,
                                    agtr_next=h.agtr), zeros, 0.001)

    queue = [h for h, _ in sent]
    for k in range(8):  # one clean window: +1
        queue += [h for h, _ in ack(queue.pop(0))]
    assert win.cwnd == 9
    for k in range(9):  # a window with one ECN mark: halved
        queue += [h for h, _ in ack(queue.pop(0), ecn=(k == 4))]
    assert win.cwnd == 4 and win.stats.cwnd_decreases == 1 and win.stats.ecn_acks == 1
    # 8 packets are still in flight: nothing new is sent until fewer than cwnd = 4 are
    assert len(queue) == 8
    for k in range(3):
        assert ack(queue.pop(0)) == []
    assert len(ack(queue.pop(0))) == 1  # a clean window of 4 ACKs: cwnd 5, and 4 + 1 in flight
    assert win.cwnd == 5


def test_receive_coalescing_follows_the_srtt():
    (job,) = make_jobs(1, 1, N, PoolRange(0, 64), ps=True)
    plan = FixedPointPlan(np.zeros(N * 200, dtype=np.float32), N, "float32", 20)
    win = AtpWindow(plan, job, 0, 1, aggregator_map(job, 16), WindowOptions(window=16, rx_coalesce=0.25),
                    initial_cwnd=8)
    (h, _), *_ = win.start(0.0)
    assert win.rx_settle() == 0.0  # no RTT sample yet
    win.on_ack(AtpHeader(bitmap0=1, flags=ACK, job_id=1, seq=h.seq, agtr=h.agtr, agtr_next=h.agtr),
               np.zeros(N, dtype=np.int32), 0.002)
    assert win.rx_settle() == pytest.approx(0.25 * 0.002)


def test_codec_round_trip_from_the_compiled_program():
    codec = AtpCodec.from_program_json(program())
    assert codec.num_elems == N and codec.header_len == 24
    h = AtpHeader(bitmap0=5, bitmap1=1, fan_in0=3, fan_in1=1, flags=RESEND, job_id=7, seq=2**32 - 1, agtr=300,
                  agtr_next=301, rank=2)
    v = np.arange(-8, 8, dtype=np.int32)
    assert codec.decode(codec.encode(h, v))[0] == h
    assert np.array_equal(codec.decode(codec.encode(h, v))[1], v)


def test_ps_names_the_rank_absent_from_every_unfinished_sequence():
    job, ps = _ps(3)
    assert ps.missing_ranks() == []
    x = np.ones(N, dtype=np.int32)
    ps.on_packet(_pkt(0b101, seq=1), x)          # ranks 0 and 2 in, rank 1 missing
    ps.on_packet(_pkt(0b001, seq=2), x)          # rank 0 only so far
    ps.on_packet(_pkt(0b100, seq=2, flags=RESEND), x)
    (ack,) = ps.on_packet(_pkt(0b111, seq=3), x)  # complete: says nothing
    assert ps.missing_ranks() == [1]


@pytest.mark.parametrize("pool, window, width", [(96, None, ATP_WINDOW), (16, None, 16), (96, 48, 48)])
def test_window_defaults_to_atp_window_within_the_pool(pool, window, width):
    """ATP's default W is ATP_WINDOW (not the whole pool, as SwitchML's), capped by the job's aggregators."""
    (job,) = make_jobs(1, 2, N, PoolRange(0, pool), ps=True)
    w = AtpWorker(job, 0, FakeTransport(FakeClock()), AtpCodec.from_program_json(program()),
                  WindowOptions(window=window))
    assert len(w.agtr) == width == PROTOCOLS["atp"].window_width(pool, window)
