"""The sans-IO window core on a fake clock: slots and sets, timeouts, backoff, retransmission, bounded failure."""

from __future__ import annotations

import numpy as np
import pytest

from worker.driver import COALESCE_MIN_OUTSTANDING, WindowOptions
from worker.switchml.blocks import Float32Plan, Int32Plan, ProtocolError
from worker.switchml.header import FLAG_RETRANSMIT, MSG_DATA, MSG_RESULT, InaHeader, pool_index
from worker.switchml.quantize import block_exponents, quantize
from worker.switchml.window import SwitchUnreachable, Window, slot_uses

N = 4  # elements per packet in these tests
OPTS = WindowOptions(window=2, timeout=0.125, backoff=2.0, max_timeout=0.375, max_retries=3)


def make_window(blocks: int = 5, *, base: int = 10, first_set=(0, 0), opts: WindowOptions = OPTS) -> Window:
    data = np.arange(blocks * N, dtype=np.int32)
    return Window(plan=Int32Plan(data, N), job_id=3, rank=1, slots=[base, base + 1], first_set=list(first_set),
                  options=opts)


def result_for(out_header: InaHeader, values, **override) -> tuple[InaHeader, np.ndarray]:
    h = InaHeader(MSG_RESULT, out_header.job_id, out_header.pool_index, out_header.packet_id, 0, 0, 0)
    if override:
        h = InaHeader(**{**{k: getattr(h, k) for k in h.__slots__}, **override})
    return h, np.asarray(values, dtype=np.int32)


def test_first_window_uses_slots_in_set_zero() -> None:
    w = make_window()
    outs = w.start(0.0)
    assert [(o.header.msg_type, o.header.job_id, o.header.pool_index, o.header.packet_id, o.header.flags,
             o.header.worker_rank) for o in outs] == [(MSG_DATA, 3, 10, 0, 0, 1), (MSG_DATA, 3, 11, 1, 0, 1)]
    assert outs[1].values.tolist() == [4, 5, 6, 7]
    assert w.stats.packets_sent == 2 and w.next_deadline() == 0.125


def test_result_frees_slot_for_next_packet_in_other_set() -> None:
    w = make_window()
    outs = w.start(0.0)
    nxt = w.on_result(*result_for(outs[0].header, [9, 9, 9, 9]), now=0.01)
    assert len(nxt) == 1
    h = nxt[0].header
    assert (h.packet_id, h.pool_index, h.slot, h.set) == (2, pool_index(10, 1), 10, 1)
    assert nxt[0].values.tolist() == [8, 9, 10, 11]
    # packet 4 goes back to set 0 of slot 10 only after packet 2's result
    assert w.on_result(*result_for(outs[1].header, [1] * 4), now=0.02)[0].header.pool_index == pool_index(11, 1)
    assert w.on_result(*result_for(h, [2] * 4), now=0.03)[0].header.pool_index == pool_index(10, 0)
    assert w.position(4) == (10, 0)


def test_sets_continue_from_first_set() -> None:
    w = make_window(first_set=(1, 0))
    assert [o.header.pool_index for o in w.start(0.0)] == [pool_index(10, 1), pool_index(11, 0)]
    assert w.position(2) == (10, 0) and w.position(3) == (11, 1)


def test_duplicate_late_and_foreign_results_ignored() -> None:
    w = make_window()
    outs = w.start(0.0)
    first = outs[0].header
    w.on_result(*result_for(first, [5] * 4), now=0.01)
    # the same result again (multicast duplicate or unicast answer to a retransmission)
    assert w.on_result(*result_for(first, [6] * 4), now=0.02) == []
    # right slot but the set of the current use differs -> stale
    assert w.on_result(*result_for(outs[1].header, [0] * 4, pool_index=pool_index(11, 1)), now=0.02) == []
    # right pool index but another packet id
    assert w.on_result(*result_for(outs[1].header, [0] * 4, packet_id=7), now=0.02) == []
    assert w.stats.duplicates_ignored == 3
    # another job, and a DATA packet, are foreign
    assert w.on_result(*result_for(outs[1].header, [0] * 4, job_id=4), now=0.02) == []
    assert w.on_result(*result_for(outs[1].header, [0] * 4, msg_type=MSG_DATA), now=0.02) == []
    assert w.stats.foreign_ignored == 2
    assert w.stats.results == 1
    assert w.plan.sums[0].tolist() == [5] * 4  # the duplicate did not overwrite


def test_timeout_retransmits_same_packet_with_flag_and_backoff() -> None:
    w = make_window()
    outs = w.start(0.0)
    assert w.on_timer(0.124) == []
    re = w.on_timer(0.125)
    assert [o.header.packet_id for o in re] == [0, 1]
    for o, orig in zip(re, outs):
        assert o.header.flags == FLAG_RETRANSMIT
        assert o.header.pool_index == orig.header.pool_index
        assert o.values.tolist() == orig.values.tolist()
    assert w.stats.retransmissions == 2 and w.stats.timeouts == 2 and w.stats.packets_sent == 4
    assert w.next_deadline() == 0.375  # 0.125 + 0.25
    assert w.on_timer(0.37) == []
    assert len(w.on_timer(0.375)) == 2
    assert w.next_deadline() == 0.75  # 0.375 + 0.375 (capped)
    # a late result for packet 0 is still accepted; its next packet starts with a fresh timeout
    nxt = w.on_result(*result_for(outs[0].header, [1] * 4), now=0.5)
    assert nxt[0].header.flags == 0 and nxt[0].header.packet_id == 2
    assert [o.header.packet_id for o in w.on_timer(0.625)] == [2]  # fresh timeout; packet 1 still waits (0.75)


def test_gives_up_with_clear_error_after_max_retries() -> None:
    w = make_window()
    outs = w.start(0.0)
    w.on_result(*result_for(outs[0].header, [1] * 4), now=0.05)
    now, sent = 0.0, 0
    with pytest.raises(SwitchUnreachable) as exc:
        while True:
            now = w.next_deadline()
            sent += len(w.on_timer(now))
    err = exc.value
    assert (err.slot, err.set, err.packet_id, err.transmissions) == (11, 0, 1, 4)
    # the result at 0.05 restarted packet 1's first timer (restart_on_progress), then no result came
    assert err.waited == pytest.approx(0.05 + OPTS.worst_case_wait()) and OPTS.worst_case_wait() == 1.125
    assert err.waited <= OPTS.give_up_bound(w.width)
    msg = str(err)
    assert "job 3: no result for packet_id 1 (slot 11, set 0) after 4 transmissions over 1.18 s" in msg
    assert "last result from the switch arrived" in msg
    assert sent <= 2 * OPTS.max_retries


def test_error_says_when_nothing_ever_arrived() -> None:
    w = make_window(opts=WindowOptions(window=2, timeout=0.05, max_timeout=0.05, max_retries=0))
    w.start(0.0)
    with pytest.raises(SwitchUnreachable, match="no result packet from the switch arrived at all"):
        w.on_timer(0.05)


def test_done_and_next_first_set() -> None:
    w = make_window(blocks=5)
    pending = {o.header.packet_id: o for o in w.start(0.0)}
    t = 0.0
    while pending:
        pid = min(pending)
        o = pending.pop(pid)
        t += 0.01
        for nxt in w.on_result(*result_for(o.header, [pid] * 4), now=t):
            pending[nxt.header.packet_id] = nxt
    assert w.done and w.stats.results == 5 and w.next_deadline() is None
    assert w.plan.output().tolist() == [p for p in range(5) for _ in range(4)]
    # slot 10 used by packets 0, 2, 4 (odd count: flips), slot 11 by 1, 3
    assert w.next_first_set() == [1, 0]
    assert [slot_uses(5, 2, i) for i in range(2)] == [3, 2]


def test_float_plan_sends_exponent_one_window_ahead() -> None:
    n, win = 2, 2
    x = np.array([[0.5, -0.25, 0.1, 0], [3, 1, -2, 0], [100, 0, 0, 0]], dtype=np.float32)
    plan = Float32Plan(x.ravel(), N, n, win)
    assert plan.num_packets == 5
    local = block_exponents(x)
    w = Window(plan=plan, job_id=1, rank=0, slots=[0, 1], first_set=[0, 0], options=OPTS)
    outs = w.start(0.0)
    # the extra batch: exponents of blocks 0 and 1, no data
    assert [o.header.exponent for o in outs] == [128 + int(local[0]), 128 + int(local[1])]
    assert all(o.values.tolist() == [0] * N for o in outs)
    # the switch agrees on a larger exponent for block 0 (another worker's block was bigger)
    agreed0 = int(local[0]) + 1
    nxt = w.on_result(InaHeader(MSG_RESULT, 1, 0, 0, 128 + agreed0, 0, 0), np.zeros(N, np.int32), now=0.01)
    assert nxt[0].header.packet_id == 2 and nxt[0].header.exponent == 128 + int(local[2])
    assert nxt[0].values.tolist() == quantize(x[0], agreed0, n).tolist()
    # an exponent below this worker's own is impossible for a correct switch
    with pytest.raises(ProtocolError, match="must return the maximum"):
        w.on_result(InaHeader(MSG_RESULT, 1, 1, 1, 128 + int(local[1]) - 1, 0, 0), np.zeros(N, np.int32), now=0.02)


def test_options_validation() -> None:
    with pytest.raises(ValueError, match="window"):
        WindowOptions(window=0)
    with pytest.raises(ValueError, match="max_timeout"):
        WindowOptions(timeout=1.0, max_timeout=0.5)
    with pytest.raises(ValueError, match="max_retries"):
        WindowOptions(max_retries=-1)
    with pytest.raises(ValueError, match="rx_coalesce must be in"):
        WindowOptions(rx_coalesce=0.6)
    with pytest.raises(ValueError, match="max_rx_coalesce"):
        WindowOptions(max_rx_coalesce=-0.001)


def test_receive_coalescing_is_a_fraction_of_the_srtt_while_enough_is_outstanding() -> None:
    """The driver's wait for more results once one is ready: rx_coalesce x SRTT, capped; none before an RTT sample,
    with few packets outstanding, or switched off."""
    opts = WindowOptions(window=8, rx_coalesce=0.1, max_rx_coalesce=0.001)
    w = Window(plan=Int32Plan(np.arange(20 * N, dtype=np.int32), N), job_id=3, rank=1, slots=list(range(8)),
               first_set=[0] * 8, options=opts)
    outs = w.start(0.0)
    assert w.rx_settle() == 0.0  # no RTT sample yet
    w.on_result(*result_for(outs[0].header, [0] * N), now=0.004)  # SRTT 4 ms, 8 outstanding (0's successor sent)
    assert w.rto.srtt == pytest.approx(0.004)
    assert w.rx_settle() == pytest.approx(0.0004)
    w.on_result(*result_for(outs[1].header, [0] * N), now=0.030)  # SRTT 7.25 ms: 0.725 ms
    assert w.rx_settle() == pytest.approx(0.1 * w.rto.srtt) and w.rto.srtt == pytest.approx(0.00725)
    assert WindowOptions(rx_coalesce=0.2).rx_settle(w.rto, 8) == pytest.approx(0.001)  # capped
    assert WindowOptions(rx_coalesce=0.0).rx_settle(w.rto, 8) == 0.0
    assert opts.rx_settle(w.rto, COALESCE_MIN_OUTSTANDING - 1) == 0.0
    assert opts.rx_settle(w.rto, COALESCE_MIN_OUTSTANDING) > 0


def test_a_change_of_epoch_within_a_run_stops_it() -> None:
    """RESULT flags bits 7..1 carry the job's epoch: the same epoch (with or without the retransmission bit) is
    fine; another one means the switch was restarted and re-programmed mid-run."""
    from worker.switchml.window import SwitchRestarted

    w = make_window()
    outs = w.start(0.0)
    nxt = w.on_result(*result_for(outs[0].header, [1] * 4, flags=5 << 1), now=0.01)
    w.on_result(*result_for(outs[1].header, [1] * 4, flags=5 << 1 | FLAG_RETRANSMIT), now=0.02)
    with pytest.raises(SwitchRestarted, match="epoch changed from 5 to 6"):
        w.on_result(*result_for(nxt[0].header, [1] * 4, flags=6 << 1), now=0.03)
    assert isinstance(SwitchRestarted(1, 2, 3), ProtocolError)
