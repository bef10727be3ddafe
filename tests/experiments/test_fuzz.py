"""experiments.fuzz: the fuzzing campaigns of `make soak` run clean on the project's programs, and their checks bite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import fuzz


def test_a_small_campaign_finds_nothing(program_dir: Path) -> None:
    report = fuzz.fuzz_all(program_dir, examples=150, seed_value=3)
    assert report.failures == [], report.text()
    assert report.programs == len(fuzz.PROGRAMS) >= 3 and report.frames == 150 * report.programs  # esa.p4 too
    assert report.requests >= 37 + 20 and report.sources >= 10 and report.jsons >= 15
    assert "fuzz failures: 0" in report.text()


@pytest.mark.parametrize("name", ["switchml", "atp", "esa", "release", "omnireduce"])
def test_a_frame_of_the_protected_job_is_noticed(program_dir: Path, name: str) -> None:
    """The isolation check can fail: the job's own worker sending its contribution (its rank's first packet, to the
    slot or aggregator job 2's state is in) changes that state."""
    import numpy as np

    from topo.inprocess import frame

    t = fuzz._Target(name, json.loads((program_dir / f"{name}.json").read_text()),
                     program_dir / f"{name}.p4info.txt")
    w = t.jobs[1].workers[1]
    rank = t.net.ranks[2, 1]
    first = rank.begin(np.full(t.num_elems, 5, dtype=np.int32), "int32").start(0.0)[0]
    data = frame(w.mac, t.dst[0], w.ip, t.dst[1], w.udp_port, t.udp_port, rank.encode(first))
    with pytest.raises(AssertionError, match="job 2's switch state changed"):
        t.feed(w.switch_port, data)


def test_a_loader_that_crashes_is_reported(program_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from switch.v1model import V1Switch

    def broken(self: V1Switch, source: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(V1Switch, "load", broken)
    programs = {"atp": json.loads((program_dir / "atp.json").read_text())}
    n, fail = fuzz.fuzz_bmv2_json(programs, 5, 1)
    assert fail is not None and "KeyError" in fail
