"""experiments.calibrate (`BW=auto`, scenario `bw_mbps = "auto"`): the rate follows from what the probe measured, the
lower of the switch's and the workers' limits, on the 1-2-5 series; scenarios resolve "auto" before they run."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.bound import Bound
from experiments.load import OutsideLoad
from experiments.calibrate import SWITCH_SHARE, calibrate, choose_rate, nice_floor
from experiments.report import summary_markdown
from experiments.config import ExperimentConfig
from experiments.result import ExperimentResult
from experiments.scenario import ScenarioError, load_scenario
from experiments.sweep import calibrated, run_scenario
from topo.cpus import CpuLayout
from topo.target import Target
from worker.launch import WorkerOutcome


@pytest.mark.parametrize("x, want", [(0.05, 0.1), (0.37, 0.2), (1.0, 1.0), (1.99, 1.0), (2.0, 2.0), (4.99, 2.0),
                                     (5.0, 5.0), (9.9, 5.0), (10.0, 10.0), (37.0, 20.0), (123.0, 100.0),
                                     (600.0, 500.0)])
def test_rates_come_from_the_1_2_5_series(x: float, want: float) -> None:
    assert nice_floor(x) == want


def test_the_rate_keeps_the_process_at_its_share() -> None:
    # 100 Mbit for 1 CPU second: 100 Mbit/s per CPU; 4 full links of b keep it at 4b/100 <= 0.6 -> b <= 15 -> 10
    assert choose_rate(1.0, 100e6, 4) == 10.0
    assert choose_rate(1.0, 100e6, 4, cpus=2) == 20.0  # two CPUs for the hosts: twice the rate
    assert choose_rate(0.5, 100e6, 1) == nice_floor(SWITCH_SHARE * 200)
    with pytest.raises(ValueError, match="nothing to calibrate"):
        choose_rate(0.0, 100e6, 4)


class FakeNetwork:
    """What `calibrate` needs of a network: run() once, close()."""

    def __init__(self, elapsed: float, switch_busy: float, host_busy: float, wire_bytes: int, ok: bool = True,
                 outside: float = 0.0):
        self.args = (elapsed, switch_busy, host_busy, wire_bytes, ok)
        self.outside = outside
        self.ran: list[ExperimentConfig] = []
        self.closed = False

    def run(self, cfg: ExperimentConfig) -> ExperimentResult:
        self.ran.append(cfg)
        elapsed, sb, hb, wire, ok = self.args
        workers = [WorkerOutcome(r, 0 if ok else 2, {"ok": ok, "verified": ok, "elapsed_s": elapsed})
                   for r in range(cfg.workers)]
        return ExperimentResult(cfg, workers, {}, Path("/dev/null"), cpu_layout=CpuLayout(switches=(0,), hosts=(1,)),
                                wire=(1000, wire), bound=Bound(None, sb, hb, outside=OutsideLoad(self.outside)))

    def close(self) -> None:
        self.closed = True


def test_calibrate_probes_on_unlimited_links_and_takes_the_lower_limit() -> None:
    cfg = ExperimentConfig(protocol="switchml", workers=4, bw=10.0, loss=0.05, size=10, target=Target.EMBEDDED)
    # 2 s, switch 50 % busy (1 CPU s), hosts 100 % of their 1 CPU (2 CPU s), 25 MB = 200 Mbit from the workers
    net = FakeNetwork(2.0, 0.5, 1.0, 25_000_000)
    cal = calibrate(cfg, open_network=lambda c: net)
    probe = net.ran[0]
    assert probe.bw is None and probe.loss == 0.0 and probe.size > 10_000 and net.closed
    assert cal.switch_mbps == 20.0   # 200 Mbit/s per switch CPU: 4 b <= 120 -> 30 -> 20
    assert cal.hosts_mbps == 10.0    # 100 Mbit/s per host CPU: 4 b <= 60 -> 15 -> 10
    assert cal.bw_mbps == 10.0 and cal.limit == "hosts"
    assert "set by the hosts" in cal.describe() and "20 Mbit/s" in cal.describe()


def test_a_probe_on_a_shared_machine_gives_the_run_the_cpus_it_had(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other processes took 1 of 2 CPUs during the probe: the switch and the hosts get half of what an idle machine
    gives, and so does the rate (a link the run cannot keep busy would not bind it)."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    cfg = ExperimentConfig(protocol="switchml", workers=4, bw=10.0, size=10, target=Target.EMBEDDED)
    cal = calibrate(cfg, open_network=lambda c: FakeNetwork(2.0, 0.5, 1.0, 25_000_000, outside=1.0))
    assert cal.available == 0.5
    assert cal.switch_mbps == 10.0   # 200 Mbit/s per switch CPU, half of it: 4 b <= 60 -> 15 -> 10
    assert cal.hosts_mbps == 5.0     # 100 Mbit/s per host CPU, half of it: 4 b <= 30 -> 7.5 -> 5
    assert "50 % of its CPUs left to the run" in cal.describe()


def test_a_failed_probe_is_an_error_not_a_rate() -> None:
    cfg = ExperimentConfig(protocol="switchml", workers=2, target=Target.EMBEDDED)
    with pytest.raises(RuntimeError, match="calibration probe"):
        calibrate(cfg, open_network=lambda c: FakeNetwork(1.0, 0.5, 0.5, 1000, ok=False))


def scenario(tmp_path: Path, bw: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(f'[scenario]\nname = "s"\nrepetitions = 1\n[network]\nbw_mbps = {bw}\n'
                    '[sweep]\nprotocols = ["switchml", "ring"]\nworkers = [2, 4]\nsizes = [1024]\n')
    return path


def test_a_scenario_resolves_auto_to_the_lowest_rate_of_its_protocols(tmp_path: Path, monkeypatch) -> None:
    sc = load_scenario(scenario(tmp_path, '"auto"'))
    assert sc.bw_mbps == "auto"
    with pytest.raises(ValueError, match="calibrate the rate first"):
        run_scenario(sc, tmp_path, program_json=tmp_path / "x.json", p4info=tmp_path / "x.txt", progress=False)
    seen = []

    def fake(cfg: ExperimentConfig):
        seen.append((cfg.protocol, cfg.workers, cfg.bw))
        rate = {"switchml": 5.0, "ring": 50.0}[cfg.protocol]
        from experiments.calibrate import Calibration
        return Calibration(cfg.protocol, cfg.workers, "embedded", 1, 1.0, 1.0, 1e6, 1.0, 1, 1.0, rate, 2 * rate)

    monkeypatch.setattr("experiments.calibrate.calibrate", fake)
    out = calibrated(sc, tmp_path / "switchml.json", tmp_path / "switchml.p4info.txt", log=lambda m: None)
    assert seen == [("switchml", 4, None), ("ring", 4, None)]  # the most workers of the sweep, unlimited probe
    assert out.bw_mbps == 5.0 and len(out.calibration) == 2
    text = summary_markdown(out, [], {"host": "test"})
    assert "5 Mbit/s (htb), calibrated to the switch" in text and "set by the switch" in text
    fixed = load_scenario(scenario(tmp_path, "10"))
    assert calibrated(fixed, tmp_path, tmp_path) is fixed


def test_a_bad_rate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="network.bw_mbps"):
        load_scenario(scenario(tmp_path, '"fast"'))
    assert load_scenario(scenario(tmp_path, "2.5")).bw_mbps == 2.5
