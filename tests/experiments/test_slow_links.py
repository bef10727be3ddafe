"""Every in-network protocol on rate-limited links, the regime every fair comparison needs (needs root): the network,
not the sender, sets the pace. Guards issue 27's regression (SwitchML: 8,214 spurious retransmissions at 2 Mbit/s,
3.9 s instead of 1.34 s) and issue 36's (ATP, before it shared `worker.reliable`: 56 s at 1 Mbit/s with two thirds
of its packets retransmissions): a loss-free run at 1 and 2 Mbit/s must retransmit under 2 % of its packets and take
at most 1.3x the time its own bytes need on the link (its frames, headers included: each protocol's header sets its
own bound), and (the adaptive window, worker/cwnd.py) without a standing queue of the whole window: its smoothed RTT
stays within a few packets' serialisation of the 5 ms queue target (a fixed window of 64 packets holds ~80 ms)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from experiments.bound import OUTSIDE, WAIT
from experiments.config import ExperimentConfig
from experiments.session import run_experiment
from topo.target import Target
from worker.protocols import PROTOCOLS, in_network, program_paths, protocol_of_program

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(240)]

ETHERNET_IPV4_UDP = 14 + 20 + 8


def _run(protocol: str, program_dir: Path, tmp_path: Path, bw_mbit: float, window_control: str):
    json_path, p4info = program_paths(program_dir, PROTOCOLS[protocol].program)
    cfg = ExperimentConfig(protocol=protocol, target=Target.EMBEDDED, program_json=json_path, p4info=p4info,
                           run_dir=tmp_path, workers=4, size=65536, bw=bw_mbit, timeout_s=60.0,
                           window_control=window_control)
    result = run_experiment(cfg)
    assert result.correct, result.table()
    sent = sum(int(w.report["packets_sent"]) for w in result.workers)
    b = result.bound
    # on a shared machine (the bound rule's `contended` condition) a host that waits for a CPU answers late and its
    # peers time out: resends and a slower run that are the machine's, not the transport's (seen with 0.85 CPUs of
    # other processes: 21.7 % resent at 2 Mbit/s)
    shared = b is not None and max(b.switch_wait, b.host_wait) >= WAIT and b.outside.cpus >= OUTSIDE
    if not shared:
        assert result.retransmissions <= 0.02 * sent, result.table()
    # the bound: every packet a worker sent (headers included) over its own uplink
    _, header, n = protocol_of_program(json_path)
    frame_bytes = ETHERNET_IPV4_UDP + header.byte_len + 4 * n
    packets = max(int(w.report["packets_sent"]) for w in result.workers)
    bound_s = packets * frame_bytes * 8 / (bw_mbit * 1e6)
    assert result.elapsed_s <= 1.3 * bound_s, (result.elapsed_s, bound_s, result.table())
    per_packet_ms = frame_bytes * 8 / (bw_mbit * 1e6) * 1000
    srtts = [float(w.report["srtt_ms"]) for w in result.workers]
    return result, cfg, per_packet_ms, srtts


@pytest.mark.parametrize("bw_mbit", [1.0, 2.0])
@pytest.mark.parametrize("protocol", in_network())
def test_four_workers_are_link_bound_without_spurious_retransmissions(protocol: str, bw_mbit: float,
                                                                     program_dir: Path, tmp_path: Path) -> None:
    result, cfg, per_packet_ms, srtts = _run(protocol, program_dir, tmp_path, bw_mbit, "fixed")
    # the whole window stands in the queue: the RTT the adaptive window avoids
    assert min(srtts) >= 0.6 * cfg.window_width * per_packet_ms, (srtts, per_packet_ms)
    assert all(w.report["window_min"] is None for w in result.workers)


PATH_MS = 10.0
"""Allowance for a protocol's unloaded round trip on this emulator: ATP's crosses the PS's link both ways, and its
hosts are ~90 % busy at 2 Mbit/s (measured: SwitchML's adaptive sRTT 13-23 ms against 80 ms with the fixed window;
ATP's 14-23 ms against 23-24 ms: its whole window of 32 short packets is about the 5 ms target already)."""


@pytest.mark.parametrize("protocol", in_network())
def test_the_adaptive_window_keeps_no_standing_queue(protocol: str, program_dir: Path, tmp_path: Path) -> None:
    result, _, per_packet_ms, srtts = _run(protocol, program_dir, tmp_path, 2.0, "adaptive")
    b = result.bound
    assert b is not None
    if b.verdict != "contended":  # on a shared machine, waits for a CPU lengthen every round trip: no RTT bound
        # the 5 ms target + 16 packets, for the median worker: one worker's sRTT also holds its own host's CPU queue
        # (ATP's hosts are ~90 % busy here; one worker measured 28.3 ms against the 27.4 ms bound)
        assert statistics.median(srtts) <= 5 + 16 * per_packet_ms + PATH_MS, (srtts, per_packet_ms)
    # the window shrank where a queue stood: for most workers (ATP's whole window of 32 short packets is about the
    # 5 ms target already, so a worker whose RTT never passed it keeps its window: measured [13, 32, 12, 20] once)
    mins = [w.report["window_min"] for w in result.workers]
    assert statistics.median(mins) < 32, mins
