"""The exactly-once soak (experiments.soak) as `make test` runs a slice of it: seeded runs of both protocols through the
real switch programs with loss, duplication, reordering and stragglers; every result exact or within its bound,
every contribution counted once, and a run replayed from its seed gives the same frames."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.soak import main, restart_detection, run_one, scenario, soak
from switch.faults import ByteMatch, FaultRule
from topo.inprocess import EngineCache


def test_a_slice_of_the_soak_finds_no_wrong_result(program_dir: Path) -> None:
    report = soak(["switchml", "atp"], runs=120, first_seed=7000, program_dir=program_dir)
    assert report.runs == {"switchml": 120, "atp": 120}
    assert report.failures == [], report.text()
    assert report.faults["drop"] > 100 and report.faults["duplicate"] > 10 and report.faults["delay"] > 10
    assert "wrong results: 0" in report.text() and "crashes: 0" in report.text()
    # the switch is programmed by the controller: each job runs with its (seeded) epoch, and a restart is caught
    assert len(report.epochs) > 50 and sum(report.epochs.values()) == 120 and 0 not in report.epochs
    assert report.restart == {"switchml": ""} and "restart detection (switchml): ok" in report.text()


def test_restart_detection_fails_when_the_epoch_does_not_change(program_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The restart case can fail: a switch re-programmed with the same epoch is not noticed (this is why
    ina_epochs exists), and the case says so."""
    from controller.switchml import SwitchMLController

    program = json.loads((program_dir / "switchml.json").read_text())
    p4info = program_dir / "switchml.p4info.txt"
    assert restart_detection("switchml", program, p4info) == ""
    create = SwitchMLController.create_job
    monkeypatch.setattr(SwitchMLController, "create_job",
                        lambda self, job, **kw: create(self, job, epoch=self.epochs.get(job.job_id, 5)))
    assert "ended without noticing the restart" in restart_detection("switchml", program, p4info)


@pytest.mark.parametrize("protocol", ["switchml", "atp"])
def test_a_seed_replays_the_same_frames(program_dir: Path, protocol: str) -> None:
    seed = next(s for s in range(1, 200) if (sc := scenario(protocol, s)).loss and sc.dup and sc.reorder)
    program = json.loads((program_dir / f"{protocol}.json").read_text())
    p4info = program_dir / f"{protocol}.p4info.txt"
    traces = [[], [], []]
    fresh = run_one(protocol, seed, program, p4info, trace=traces[0])
    again = run_one(protocol, seed, program, p4info, trace=traces[1])
    cache = EngineCache()
    run_one(protocol, seed + 1, program, p4info, engines=cache)  # leave state behind in the cached engine
    reused = run_one(protocol, seed, program, p4info, trace=traces[2], engines=cache)
    assert fresh.ok and fresh.faults["drop"] and fresh.faults["duplicate"] + fresh.faults["delay"]
    assert fresh.trace_digest == again.trace_digest == reused.trace_digest
    assert traces[0] == traces[1] == traces[2] and traces[0]


def test_a_corrupted_contribution_is_reported_with_its_replay_command(program_dir: Path) -> None:
    """The soak's checks can fail: flip a value bit in one worker's first data packet (its IPv4/UDP checksums are
    not verified by switchml.p4) and the run reports the wrong sums."""
    program = json.loads((program_dir / "switchml.json").read_text())
    seed = next(s for s in range(1, 200) if scenario("switchml", s).dtype == "int32")
    flip = FaultRule(action="corrupt", direction="in", ports=frozenset({1}), nth=frozenset({1}),
                     match=(ByteMatch(42, b"\x01", b"\xff"),), corrupt_offset=42 + 12 + 3, corrupt_xor=b"\x01")
    out = run_one("switchml", seed, program, program_dir / "switchml.p4info.txt", extra_rules=[flip])
    assert not out.ok and out.wrong and "int32 sums wrong" in out.wrong[0]
    assert out.replay() == f"python -m experiments.soak --protocol switchml --seed {seed} --runs 1 --trace soak-trace.pcapng"


def test_cli_replay_writes_the_trace(program_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.txt"
    assert main(["--protocol", "atp", "--seed", "3", "--runs", "1", "--trace", str(trace),
                 "--program-dir", str(program_dir)]) == 0
    out = capsys.readouterr().out
    lines = trace.read_text().splitlines()
    assert f"{len(lines)} frames at the switch's ports, sha256" in out
    assert {line.split()[1] for line in lines} == {"in", "out"}


def test_a_trace_is_a_pcapng_with_each_frame_s_direction_and_port(tmp_path: Path) -> None:
    """Issue 26: soak traces were hex text only; a .pcapng opens in Wireshark and scapy."""
    from scapy.utils import rdpcap

    from experiments.soak import write_trace

    frames = [(0.5, "in", 1, bytes(range(60))), (0.75, "out", 3, bytes(64))]
    write_trace(tmp_path / "t.pcapng", frames)
    back = rdpcap(str(tmp_path / "t.pcapng"))
    assert [bytes(p) for p in back] == [f for _, _, _, f in frames]
    assert [p.comment for p in back] == [b"in port 1", b"out port 3"]
    assert [float(p.time) for p in back] == [0.5, 0.75]
