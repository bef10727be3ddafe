"""Scenarios on the packet simulator (`engine = "sim"`): the file's [sim] section and refusals, a run's row, a whole
sweep with its report, and the same rows from a local Dask cluster as from the serial run."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from experiments.bound import VERDICTS
from experiments.scenario import RunPoint, ScenarioError, SimModel, load_scenario
from experiments.simulate import run_point, run_scenario

TINY = """
[scenario]
repetitions = 1
seed = 4
[network]
engine = "sim"
bw_mbps = 10000
[sim]
delay_us = 2
buffer_kib = 256
ecn_kib = 32
[sweep]
protocols = ["switchml", "atp"]
workers = [3]
sizes = [2048]
dtype = "int32"
loss = [0.0, 0.02]
"""


def scenario(tmp_path: Path, text: str = TINY) -> Path:
    path = tmp_path / "tiny-sim.toml"
    path.write_text(text)
    return path


def test_a_sim_scenario_reads_its_model(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path))
    assert sc.engine == "sim" and sc.bw_mbps == 10000
    assert sc.sim == SimModel(delay_us=2.0, buffer_kib=256.0, ecn_kib=32.0)
    assert load_scenario(scenario(tmp_path, "[sweep]\nworkers = [2]\n")).engine == "mininet"
    htb = load_scenario(scenario(tmp_path, TINY.replace("[sim]\n", "[sim]\nshaper = 'htb'\n")))
    assert htb.sim.shaper == "htb" and sc.sim.shaper == "wire"


@pytest.mark.parametrize("text, key", [
    ("[network]\nengine = 'ns3'\n", "network.engine"),
    ("[sim]\ndelay_us = 1\n", "sim"),
    ("[network]\nengine = 'sim'\n[sweep]\nprotocols = ['switchml']\n", "network.bw_mbps"),
    ("[network]\nengine = 'sim'\nbw_mbps = 'auto'\n[sweep]\nprotocols = ['switchml']\n", "network.bw_mbps"),
    ("[network]\nengine = 'sim'\nbw_mbps = 100\ntarget = 'bmv2'\n[sweep]\nprotocols = ['atp']\n", "network.target"),
    ("[network]\nengine = 'sim'\nbw_mbps = 100\n[sweep]\nprotocols = ['atp']\nbackground_mbps = [1]\n",
     "sweep.background_mbps"),
    ("[network]\nengine = 'sim'\nbw_mbps = 100\n[sim]\ndask = 1\n[sweep]\nprotocols = ['atp']\n", "sim.dask"),
    ("[network]\nengine = 'sim'\nbw_mbps = 100\n[sim]\nshaper = 'tbf'\n[sweep]\nprotocols = ['atp']\n", "sim.shaper"),
    ("[network]\nbw_mbps = 100\n[sweep]\nworkers = [64]\n", "sweep.workers"),
])
def test_what_the_simulator_cannot_run_is_refused_at_load(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ScenarioError, match=key.replace(".", r"\.")):
        load_scenario(scenario(tmp_path, text))


def test_a_simulated_run_is_a_verified_deterministic_row(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path))
    lossy = next(p for p in sc.runs() if p.protocol == "switchml" and p.loss)
    row = run_point(sc, lossy, 1)
    assert row.verified and row.error == "" and row.engine == "sim"
    assert row.retransmissions > 0 and row.bound in VERDICTS and row.bottleneck.endswith("%")
    assert row.sim_events > 0 and row.wall_s is not None and row.elapsed_s > 0 and row.seed == 5
    clean = run_point(sc, next(p for p in sc.runs() if p.protocol == "switchml" and not p.loss), 1)
    assert clean.verified and clean.wire_frames == 3 * 2048 // 64 and clean.retransmissions == 0  # 32 per worker
    assert replace(run_point(sc, lossy, 1), wall_s=None) == replace(row, wall_s=None)


def test_host_baselines_run_in_a_sim_scenario_with_verified_rows(tmp_path: Path) -> None:
    sc = load_scenario(scenario(tmp_path, TINY.replace('"switchml", "atp"', '"ring", "switchml"')))
    ring, switchml, lossy = (run_point(sc, p, 1) for p in sc.runs() if p.protocol == "ring" or not p.loss)
    assert all(r.verified and r.error == "" and r.engine == "sim" for r in (ring, switchml, lossy))
    assert ring.retransmissions == 0 and ring.wire_frames > 3 * (2 + 4 * 2)  # headers, 4 steps of 2 segments, ACKs
    assert lossy.loss and lossy.retransmissions > 0 and lossy.elapsed_s > ring.elapsed_s
    assert ring.result_digest == switchml.result_digest  # the same int32 sums
    assert ring.switch_aggregated == 0 and switchml.switch_aggregated > 0


def test_a_sweep_writes_rows_and_a_report_and_dask_gives_the_same_rows(tmp_path: Path) -> None:
    from experiments.report import write_report

    sc = load_scenario(scenario(tmp_path))
    serial, parallel = tmp_path / "serial", tmp_path / "dask"
    serial.mkdir()
    parallel.mkdir()
    rows = run_scenario(sc, serial, progress=False, log=lambda _: None)
    assert len(rows) == 4 and all(r.verified for r in rows)
    text = write_report(sc, rows, serial)
    assert "Packet simulator" in text and (serial / "time.png").is_file()
    rows_dask = run_scenario(replace(sc, sim=replace(sc.sim, dask=True)), parallel, progress=False,
                             log=lambda _: None)

    def table(out: Path) -> list[dict[str, str]]:
        return [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(open(out / "runs.csv"))]

    assert table(parallel) == table(serial)
    assert [replace(r, wall_s=None) for r in rows_dask] == [replace(r, wall_s=None) for r in rows]


def test_the_recovery_section_sets_the_same_options_on_both_engines(tmp_path: Path) -> None:
    """[recovery] becomes the emulator's worker flags and the simulator's WindowOptions, and they agree."""
    from worker.__main__ import build_parser
    from worker.driver import timeouts

    text = TINY + "[recovery]\ntimeout_ms = 1\nfixed_timeout = true\nbackoff = 1\nfast_retransmit = 0\n"
    rec = load_scenario(scenario(tmp_path, text)).recovery
    opts = rec.window_options(8)
    args = build_parser().parse_args(["--job", "j.json", "--rank", "0", *rec.worker_args()])
    assert (opts.timeout, opts.min_timeout, opts.max_timeout) == timeouts(args.timeout_ms, args.min_timeout_ms,
                                                                          args.max_timeout_ms)
    assert (opts.adaptive, opts.backoff, opts.fast_retransmit, opts.window) == \
        (not args.fixed_timeout, args.backoff, args.fast_retransmit, 8) == (False, 1.0, 0, 8)
    assert "a fixed 1 ms timeout, backoff x1" in rec.describe()
    assert load_scenario(scenario(tmp_path)).recovery.worker_args() == ()  # no section: the worker's defaults
    with pytest.raises(ScenarioError, match=r"recovery: min_timeout"):
        load_scenario(scenario(tmp_path, TINY + "[recovery]\nmin_timeout_ms = 50\nmax_timeout_ms = 10\n"))
    with pytest.raises(ScenarioError, match=r"recovery\.fixed_timeout"):
        load_scenario(scenario(tmp_path, TINY + "[recovery]\nfixed_timeout = 1\n"))


def test_a_published_one_ms_timeout_costs_a_millisecond_per_loss_at_100_gbps(tmp_path: Path) -> None:
    """SwitchML's published recovery in the simulator: a lost packet waits its fixed 1 ms timeout (12.5 MB of line
    time at 100 Gbit/s), where the loss-free all-reduce takes microseconds."""
    text = TINY.replace('["switchml", "atp"]', '["switchml"]').replace("loss = [0.0, 0.02]", "loss = [0.0, 0.001]")
    text = text.replace("bw_mbps = 10000", "bw_mbps = 100000")
    sc = load_scenario(scenario(tmp_path, text + "[recovery]\ntimeout_ms = 1\nfixed_timeout = true\nbackoff = 1\n"
                                               "fast_retransmit = 0\n"))
    sc = replace(sc, sizes=(16384,))
    clean, lossy = (run_point(sc, p, 1) for p in sc.runs())
    assert clean.verified and lossy.verified and lossy.retransmissions > 0
    assert clean.elapsed_s < 1e-4 and 1e-3 <= lossy.elapsed_s < 1e-3 * (lossy.retransmissions + 1)


def test_an_adaptive_window_reaches_the_simulated_workers_and_drains_the_standing_queue(tmp_path: Path) -> None:
    """window_control = "adaptive" (worker.cwnd.BdpWindow) in a simulation as in the emulator: on a 2 Mbit/s link a
    64-slot window only queues, and the adaptive one keeps its RTT near the path's (the same time, a lower RTT)."""
    from topo.sim import SimNetwork

    text = TINY.replace('["switchml", "atp"]', '["switchml"]').replace("loss = [0.0, 0.02]", "loss = [0.0]")
    text = text.replace("bw_mbps = 10000", "bw_mbps = 2\npool_size = 64").replace("sizes = [2048]", "sizes = [16384]")
    seen: list[tuple[bool, float]] = []
    real = SimNetwork.allreduce

    def spy(self: SimNetwork, *args: object, **kw: object) -> object:
        out = real(self, *args, **kw)  # type: ignore[arg-type]
        seen.append((self.options.adapt_window, max(w.stats.srtt for w in out[1].windows)))
        return out
    SimNetwork.allreduce = spy  # type: ignore[method-assign]
    try:
        fixed = run_point(load_scenario(scenario(tmp_path, text)), RunPoint("switchml", 3, 16384, 0.0, 0.0, 0.0), 1)
        text = text.replace("pool_size = 64", "pool_size = 64\nwindow_control = 'adaptive'")
        adaptive = run_point(load_scenario(scenario(tmp_path, text)), RunPoint("switchml", 3, 16384, 0.0, 0.0, 0.0), 1)
    finally:
        SimNetwork.allreduce = real  # type: ignore[method-assign]
    assert fixed.verified and adaptive.verified
    (was, fixed_rtt), (now, adaptive_rtt) = seen
    assert (was, now) == (False, True) and adaptive_rtt < fixed_rtt / 2
    assert adaptive.elapsed_s == pytest.approx(fixed.elapsed_s, rel=0.05)
