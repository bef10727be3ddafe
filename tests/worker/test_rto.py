"""The adaptive timeout: RFC 6298 estimator, Karn's rule in the window core, fast retransmit, bounded give-up."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pytest

from worker.driver import WindowOptions
from worker.rto import RtoEstimator
from worker.switchml.blocks import Float32Plan, Int32Plan
from worker.switchml.header import FLAG_RETRANSMIT, MSG_RESULT, InaHeader
from worker.switchml.quantize import EXPONENT_BIAS, block_exponents, dequantize, quantize
from worker.switchml.window import SwitchUnreachable, Window

N = 4


def test_estimator_follows_rfc6298() -> None:
    est = RtoEstimator(initial_rto=0.1, min_rto=0.002, max_rto=1.0)
    assert est.srtt is None and est.rto == 0.1
    est.sample(0.010)  # first: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR
    assert (est.srtt, est.rttvar) == (0.010, 0.005) and est.rto == pytest.approx(0.030)
    est.sample(0.002)  # RTTVAR = 3/4 * 0.005 + 1/4 * |0.010 - 0.002|, SRTT = 7/8 * 0.010 + 1/8 * 0.002
    assert est.rttvar == pytest.approx(0.00575) and est.srtt == pytest.approx(0.009)
    assert est.rto == pytest.approx(0.009 + 4 * 0.00575)
    assert est.samples == 2


def test_estimator_floor_on_variance_and_cap() -> None:
    est = RtoEstimator(initial_rto=0.1, min_rto=0.02, max_rto=0.5)
    for _ in range(200):
        est.sample(0.004)  # steady RTT: RTTVAR decays to ~0
    assert est.rttvar < 1e-9
    assert est.rto == pytest.approx(0.004 + 0.02)  # SRTT + min_rto, not SRTT alone
    est.sample(3.0)
    assert est.rto == 0.5
    assert RtoEstimator(initial_rto=0.001, min_rto=0.02, max_rto=0.5).rto == 0.02  # initial value clamped
    with pytest.raises(ValueError, match="min_rto"):
        RtoEstimator(initial_rto=0.1, min_rto=0.0, max_rto=1.0)


def make_window(blocks: int, opts: WindowOptions, width: int = 4) -> Window:
    data = np.arange(blocks * N, dtype=np.int32)
    return Window(plan=Int32Plan(data, N), job_id=3, rank=0, slots=list(range(width)), first_set=[0] * width,
                  options=opts)


def answer(w: Window, hdr: InaHeader, now: float):
    return w.on_result(InaHeader(MSG_RESULT, hdr.job_id, hdr.pool_index, hdr.packet_id, 0, 0, 0),
                       np.zeros(N, np.int32), now)


class Replies:
    """Starts a window and answers its packets by id, 1 ms apart; a call returns the ids the window sends."""

    def __init__(self, w: Window) -> None:
        self.w, self.t = w, 0.0
        self.outs = {o.header.packet_id: o for o in w.start(0.0)}

    def __call__(self, pid: int) -> list[int]:
        self.t += 0.001
        got = answer(self.w, self.outs[pid].header, self.t)
        self.outs.update((o.header.packet_id, o) for o in got)
        return [o.header.packet_id for o in got]


ADAPTIVE = WindowOptions(window=4, timeout=0.1, min_timeout=0.005, max_timeout=0.4, max_retries=3, fast_retransmit=0)


def test_timeouts_follow_measured_rtt_and_karn() -> None:
    w = make_window(12, ADAPTIVE)
    outs = {o.header.packet_id: o for o in w.start(0.0)}
    assert w.next_deadline() == 0.1  # no sample yet: the initial timeout
    [nxt] = answer(w, outs[0].header, 0.008)  # RTT 8 ms: RTO = 8 + max(5, 16) = 24 ms
    assert w.rto.srtt == 0.008
    assert nxt.header.packet_id == 4
    assert w._pending[0].deadline == pytest.approx(0.008 + 0.024)
    # packets 1-3 were sent before any sample: the first sample re-arms them from the measured RTO (sent at 0,
    # so due at 24 ms) instead of leaving them on the 100 ms initial timeout
    assert w._pending[1].deadline == pytest.approx(0.024) and w.next_deadline() == pytest.approx(0.024)
    # they time out and packet 1 is answered after its retransmission: no sample (Karn)
    assert [o.header.packet_id for o in w.on_timer(0.1)] == [1, 2, 3, 4]  # by deadline: 24 ms, then 32 ms
    assert w._pending[1].timeout == pytest.approx(0.048)  # backoff of its own timeout, x2
    answer(w, outs[1].header, 0.15)
    assert w.rto.samples == 1 and w.rto.srtt == 0.008
    assert w.stats.timeouts == 4 and w.stats.retransmissions == 4


def test_initial_timeout_is_rfc6298s_one_second_and_a_slow_first_answer_is_no_timeout() -> None:
    # a slow switch (real BMv2) answers the first window after 300 ms: nothing is retransmitted, and from then on the
    # measured RTT sets the pace
    w = make_window(12, WindowOptions(window=4, max_timeout=1.0, fast_retransmit=0))
    assert WindowOptions().timeout == 1.0
    outs = w.start(0.0)
    assert w.next_deadline() == 1.0
    for o in outs:
        answer(w, o.header, 0.3)
    assert w.stats.retransmissions == 0 and w.stats.timeouts == 0  # the old 100 ms guess fired here
    assert w.rto.srtt == pytest.approx(0.3)
    assert w.on_timer(0.8) == []  # the next window's timeouts come from the measured RTT (300 ms + variance)
    assert 0.8 < w.next_deadline() < 1.3


def test_fixed_timeout_ignores_samples() -> None:
    w = make_window(12, WindowOptions(window=4, timeout=0.1, max_timeout=0.4, adaptive=False, fast_retransmit=0))
    outs = w.start(0.0)
    answer(w, outs[0].header, 0.008)
    assert w._pending[0].deadline == pytest.approx(0.108)


def test_fast_retransmit_after_three_later_packets_answered() -> None:
    opts = WindowOptions(window=4, timeout=0.1, min_timeout=0.005, max_timeout=0.4, max_retries=3, fast_retransmit=3)
    w = make_window(12, opts)
    outs = w.start(0.0)
    assert answer(w, outs[1].header, 0.001)[0].header.packet_id == 5
    assert answer(w, outs[2].header, 0.002)[0].header.packet_id == 6
    got = answer(w, outs[3].header, 0.003)  # third packet sent after packet 0: packet 0 is retransmitted first
    assert [o.header.packet_id for o in got] == [0, 7]
    re = got[0]
    assert re.header.flags == FLAG_RETRANSMIT and re.header.pool_index == outs[0].header.pool_index
    assert re.values.tolist() == outs[0].values.tolist()
    assert w.stats.fast_retransmissions == 1 and w.stats.retransmissions == 1 and w.stats.timeouts == 0
    p0 = w._pending[0]
    # restarted, no backoff, with the RTO measured from packet 1 (1 ms RTT: 1 + max(5, 2) = 6 ms), not the initial 100
    assert p0.retries == 0 and p0.timeout == pytest.approx(0.006) and p0.deadline == pytest.approx(0.009)
    # once only: more later results do not retransmit it again
    assert [o.header.packet_id for o in answer(w, got[1].header, 0.004)] == [11]
    assert w.stats.fast_retransmissions == 1
    # its answer is no RTT sample (sent twice)
    samples = w.rto.samples
    answer(w, outs[0].header, 0.02)
    assert w.rto.samples == samples


def test_fast_retransmit_off() -> None:
    w = make_window(12, ADAPTIVE)
    outs = w.start(0.0)
    for i in (1, 2, 3):
        assert [o.header.packet_id for o in answer(w, outs[i].header, 0.001 * i)] == [4 + i]
    assert w.stats.retransmissions == 0


def test_give_up_is_bounded_with_fast_retransmit() -> None:
    opts = WindowOptions(window=4, timeout=0.05, max_timeout=0.2, max_retries=3, fast_retransmit=1, adaptive=False,
                         max_fast_retransmits=1)
    w = make_window(12, opts)
    outs = w.start(0.0)
    answer(w, outs[1].header, 0.01)  # fast-retransmits packet 0 at 10 ms
    answer(w, outs[2].header, 0.01)
    answer(w, outs[3].header, 0.01)  # the packets outstanding now were all sent at 10 ms
    assert w.stats.fast_retransmissions == 1
    with pytest.raises(SwitchUnreachable) as exc:
        while True:
            w.on_timer(w.next_deadline())
    err = exc.value
    assert err.packet_id == 0 and err.transmissions == opts.max_retries + 2
    # timer restarted at 10 ms with the first timeout (50 ms), then 100, 200, 200
    assert err.waited == pytest.approx(0.01 + opts.worst_case_wait(0.05))
    assert err.waited <= opts.worst_case_wait(0.05) + 0.05 <= opts.give_up_bound()
    assert opts.give_up_bound() == pytest.approx(0.05 + 0.1 + 0.2 + 0.2 + 0.05)
    assert WindowOptions(timeout=0.2, max_timeout=0.2, max_retries=3,
                         max_fast_retransmits=1).give_up_bound() == pytest.approx(0.2 * 4 + 0.2)
    # each fast retransmission restarts a timer that had not expired: one first timeout more per allowed one
    assert WindowOptions(timeout=0.2, max_timeout=0.2, max_retries=3).give_up_bound() == pytest.approx(0.2 * 4 + 0.6)


def test_float_plan_fast_path_is_bit_identical_to_quantize() -> None:
    rng = np.random.default_rng(5)
    scales = 2.0 ** rng.integers(-60, 60, size=40)
    x = (rng.standard_normal((40, N)) * scales[:, None]).astype(np.float32)
    x[3] = 0.0
    x[4, 0] = np.float32(2.0**-140)  # subnormal
    n, win = 3, 4
    plan = Float32Plan(x.ravel(), N, n, win)
    local = block_exponents(x)
    for k in range(40):
        agreed = int(local[k]) + int(rng.integers(0, 3))
        plan._agree(k, agreed + EXPONENT_BIAS)
        _, q = plan.packet(k + win)
        assert q.dtype == np.int32 and q.tolist() == quantize(x[k], agreed, n).tolist()
        sums = rng.integers(-(2**31), 2**31, size=N, dtype=np.int64).astype(np.int32)
        plan.result(k + win, 255, sums)  # any exponent >= the local one (overwritten before use)
        out = plan.output().reshape(40, N)[k]
        assert out.tobytes() == dequantize(sums, agreed, n).tobytes()
        assert math.isfinite(float(out.sum()))


def test_cli_timeout_options(tmp_path, capsys) -> None:
    from tests.worker.ina_fixtures import LAYOUT_JSON, make_job
    from worker.__main__ import EXIT_CONFIG, build_parser, main

    path = tmp_path / "job.json"
    make_job(2, ip_prefix="198.51.100").save(path)  # TEST-NET-2: binding fails (exit 5) once the options are valid
    base = ["--job", str(path), "--rank", "0", "--program-json", str(LAYOUT_JSON)]
    # the default 20 ms floor follows a lower --max-timeout-ms instead of rejecting it
    assert main([*base, "--max-timeout-ms", "10", "--timeout-ms", "5"]) == 5
    assert "cannot bind UDP 198.51.100.1" in capsys.readouterr().err
    assert main([*base, "--min-timeout-ms", "50", "--max-timeout-ms", "10", "--timeout-ms", "5"]) == EXIT_CONFIG
    assert "min_timeout must be > 0 and <= max_timeout 0.01, got 0.05" in capsys.readouterr().err
    assert main([*base, "--fast-retransmit", "-1"]) == EXIT_CONFIG
    assert "fast_retransmit must be >= 0" in capsys.readouterr().err
    args = build_parser().parse_args([*base, "--fixed-timeout", "--fast-retransmit", "0"])
    assert args.fixed_timeout and args.fast_retransmit == 0 and args.min_timeout_ms is None


def test_fast_retransmit_at_the_end_of_the_run() -> None:
    """The last packets have fewer than K successors: the answer of the run's last packet is enough."""
    opts = WindowOptions(window=4, timeout=0.1, max_timeout=0.4, fast_retransmit=3)
    w = make_window(4, opts)  # 4 packets, all sent at once: packet 1 has only 2 successors
    outs = w.start(0.0)
    assert answer(w, outs[0].header, 0.001) == []
    assert answer(w, outs[2].header, 0.002) == []  # packet 3 (the last one) still missing: no guess yet
    got = answer(w, outs[3].header, 0.003)
    assert [o.header.packet_id for o in got] == [1] and got[0].header.flags == FLAG_RETRANSMIT
    assert w.stats.fast_retransmissions == 1


def test_a_late_packet_answered_at_once_does_not_overtake_the_window() -> None:
    """Fast retransmit counts answered successors (RFC 6675's DupThresh), not the place of the highest answered one.

    This worker's result of packet 4 is lost; its fast retransmission brings the result back after packets 9-11
    were sent, so packet 8 (the slot's next use) goes out behind them. Its slot then only waited for this worker, so
    8 is answered at once: one successor of 9-11, not three, and no reason to retransmit them."""
    w = make_window(40, WindowOptions(window=4, timeout=0.1, min_timeout=0.005, max_timeout=0.4, fast_retransmit=3))
    ans = Replies(w)
    assert [ans(pid) for pid in range(4)] == [[4], [5], [6], [7]]
    assert [ans(pid) for pid in (5, 6, 7)] == [[9], [10], [4, 11]]  # 4: three later packets answered
    assert ans(4) == [8]  # the retransmission's answer: 8 is sent after 9-11
    assert ans(8) == [12]  # answered first: 9-11 are not overtaken by three
    assert [ans(pid) for pid in (9, 10, 11)] == [[13], [14], [15]]
    assert w.stats.fast_retransmissions == 1
    assert [ans(pid) for pid in (13, 14, 15)] == [[17], [18], [12, 19]]  # a real loss still counts: 12 is missing
    assert w.stats.fast_retransmissions == 2


def test_last_packet_relies_on_its_timeout() -> None:
    w = make_window(4, WindowOptions(window=4, timeout=0.1, max_timeout=0.4, fast_retransmit=1))
    outs = w.start(0.0)
    for i in range(3):
        assert answer(w, outs[i].header, 0.001 * (i + 1)) == []
    assert w.stats.fast_retransmissions == 0
    assert [o.header.packet_id for o in w.on_timer(0.1)] == [3]


def test_a_lost_fast_retransmission_is_sent_again_bounded() -> None:
    """A fast retransmission counts as lost by the fast-retransmit rule measured from when it was sent (K packets
    registered after it answered); at most max_fast_retransmits times, then only the timeout is left."""
    opts = WindowOptions(window=4, timeout=0.1, min_timeout=0.005, max_timeout=0.4, max_retries=3, fast_retransmit=2,
                         max_fast_retransmits=2)
    w = make_window(40, opts)
    ans = Replies(w)
    assert ans(1) == [5]
    assert ans(2) == [0, 6]  # two packets sent after 0 answered: fast retransmission 1, before packet 6 was sent
    assert ans(3) == [7]
    assert ans(5) == [9]  # packet 5 was sent before the retransmission
    assert ans(6) == [10]  # one packet sent after it answered
    assert ans(7) == [0, 11]  # two: the retransmission counts as lost too, sent again (fast retransmission 2)
    assert w.stats.fast_retransmissions == 2 and w._pending[0].fast_count == 2
    for pid in (9, 10, 11):
        assert 0 not in ans(pid)  # the bound: no third fast retransmission
    assert w.stats.fast_retransmissions == 2 and w.stats.timeouts == 0
    fired: list = []
    for _ in range(10):  # timers that expire before the last result's timeout restart from it (restart_on_progress)
        fired = w.on_timer(w.next_deadline())
        if fired:
            break
    assert [o.header.packet_id for o in fired] == [0]  # the timeout is left
    assert w.stats.timeouts == 1
    ans(0)
    assert not w._refast


def test_give_up_bound_covers_repeated_fast_retransmissions() -> None:
    """Each fast retransmission restarts a timer that had not expired: a packet fast-retransmitted twice, just before
    its timeout each time, waits longer than worst_case_wait(t0) + t0 but within give_up_bound()."""
    opts = WindowOptions(window=4, timeout=0.05, max_timeout=0.05, max_retries=1, fast_retransmit=1,
                         max_fast_retransmits=2, adaptive=False)
    w = make_window(40, opts)
    outs = {o.header.packet_id: o for o in w.start(0.0)}
    for now, pids in ((0.04, (1, 2, 3)), (0.085, (5, 6, 7))):  # each round: 0 fast-retransmitted again
        for pid in pids:
            for o in answer(w, outs[pid].header, now):
                outs[o.header.packet_id] = o
    assert w.stats.fast_retransmissions == 2
    with pytest.raises(SwitchUnreachable) as exc:
        while True:
            w.on_timer(w.next_deadline())
    assert exc.value.packet_id == 0
    assert opts.worst_case_wait(0.05) + 0.05 < exc.value.waited <= opts.give_up_bound()
    assert exc.value.waited == pytest.approx(0.185)
    assert exc.value.transmissions == 4  # the first, two fast retransmissions, one after a timeout


def test_max_fast_retransmits_one_is_the_old_once_only() -> None:
    opts = WindowOptions(window=4, timeout=0.1, max_timeout=0.4, fast_retransmit=1, max_fast_retransmits=1)
    w = make_window(40, opts)
    outs = w.start(0.0)
    got = answer(w, outs[1].header, 0.001)
    assert [o.header.packet_id for o in got] == [0, 5]
    for i, o in enumerate([outs[2], outs[3], got[1]]):
        assert 0 not in [x.header.packet_id for x in answer(w, o.header, 0.002 + 0.001 * i)]
    assert w.stats.fast_retransmissions == 1
    with pytest.raises(ValueError, match="max_fast_retransmits"):
        WindowOptions(max_fast_retransmits=0)


class _BruteForceWindow(Window):
    """The fast-retransmit rule computed from scratch on every call: each outstanding packet's count of answered
    packets first sent after it (or after its last fast retransmission), no queues. The reference the queues must
    match."""

    __slots__ = ("_order",)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._order: dict[int, int] = {}  # packet_id -> number of its latest fast retransmission in the run

    def _fast_retransmits(self, now: float):
        k, last = self.options.fast_retransmit, self.plan.num_packets - 1
        live = [p for p in self._pending.values() if not p.retries]
        outstanding = {p.seq for p in self._pending.values()}
        answered = [s for s in range(self._seq) if s not in outstanding]
        out = []
        for p in sorted((p for p in live if not p.fast_count and p.seq < last), key=lambda p: p.seq):
            if sum(s > p.seq for s in answered) >= min(k, last - p.seq):
                out.append(self._fast(p, now))
        again = [p for p in live if 0 < p.fast_count < self.options.max_fast_retransmits]
        for p in sorted(again, key=lambda p: (p.mark, self._order[p.packet_id])):
            if sum(s >= p.mark for s in answered) >= k:
                out.append(self._fast(p, now))
        return out

    def _fast(self, p, now: float):
        self._order[p.packet_id] = self.stats.fast_retransmissions
        return super()._fast(p, now)


@pytest.mark.parametrize("seed", range(40))
def test_fast_retransmit_queue_matches_the_full_scan(seed: int) -> None:
    """Random losses, reordering and timeouts: the window sends exactly what the brute-force reference sends."""
    rng = random.Random(seed)
    opts = WindowOptions(window=8, timeout=0.05, min_timeout=0.005, max_timeout=0.2, max_retries=50,
                         fast_retransmit=rng.choice([1, 2, 3, 5]), max_fast_retransmits=rng.choice([1, 2, 3, 4]))
    data = np.arange(60 * N, dtype=np.int32)
    a, b = (cls(plan=Int32Plan(data, N), job_id=3, rank=0, slots=list(range(8)), first_set=[0] * 8, options=opts)
            for cls in (Window, _BruteForceWindow))
    t = 0.0

    def sent(outs):
        return [(o.header.packet_id, o.header.pool_index, o.header.flags) for o in outs]

    flights = sent(a.start(t))
    assert flights == sent(b.start(t))
    loss = rng.choice([0.05, 0.2, 0.4])
    while not a.done:
        assert not b.done
        t += 0.001
        if flights and rng.random() < 0.9:
            pid, pool, _ = flights.pop(rng.randrange(min(len(flights), 4)))  # mostly in order, sometimes overtaken
            if rng.random() < loss:
                continue
            hdr = InaHeader(MSG_RESULT, 3, pool, pid, 0, 0, 0)
            got_a, got_b = answer(a, hdr, t), answer(b, hdr, t)
        else:
            t = max(t, a.next_deadline() or t)
            got_a, got_b = a.on_timer(t), b.on_timer(t)
        assert sent(got_a) == sent(got_b)
        flights += sent(got_a)
    assert b.done
    assert a.stats.fast_retransmissions == b.stats.fast_retransmissions
    assert a.stats.fast_retransmissions > 0 or loss == 0.05


def test_a_packet_behind_a_standing_queue_is_not_retransmitted_while_results_flow() -> None:
    """RFC 6298 5.3: the timer restarts on every fresh result. A switch that answers a window slowly but steadily
    (real BMv2: ~17 ms for a window of 4 x 64 packets) makes no packet time out, where per-packet timers armed from
    the first, unqueued RTT fire spuriously; once results stop, the oldest unanswered packet times out."""
    opts = WindowOptions(window=8, timeout=0.1, min_timeout=0.005, max_timeout=0.4, fast_retransmit=0)
    timeouts = {}
    for restart in (True, False):
        w = make_window(40, replace(opts, restart_on_progress=restart))
        outs = {o.header.packet_id: o for o in w.start(0.0)}
        t, sent = 0.0, []
        # the first answer comes fast (an empty queue), then one every 4 ms: the queue the window built
        for k, pid in enumerate(range(8)):
            t = 0.002 if k == 0 else t + 0.004
            sent += w.on_timer(t) if w.next_deadline() is not None and w.next_deadline() <= t else []
            for o in answer(w, outs[pid].header, t):
                outs[o.header.packet_id] = o
        assert w.stats.timeouts == len(sent)
        timeouts[restart] = w.stats.timeouts
    assert timeouts[True] == 0 and timeouts[False] > 0
    # results stop: the oldest unanswered packet times out one RTO after the last result
    w = make_window(40, opts)
    outs = {o.header.packet_id: o for o in w.start(0.0)}
    answer(w, outs[0].header, 0.002)
    last = 0.010
    answer(w, outs[1].header, last)
    fired = []
    while not fired:
        fired = w.on_timer(w.next_deadline())
    assert w.next_deadline() is not None and fired[0].header.packet_id == 2
    assert w._pending[2].first_sent == 0.0  # sent at start, retransmitted only after the results stopped
