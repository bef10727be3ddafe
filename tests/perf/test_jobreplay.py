"""perf.jobreplay: a simulated job's switch traffic, replayed into a fresh switch, is the same work (the same frames
out, in order), so its rate is the switch's per-packet cost on that protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from perf import jobreplay

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("protocol", ["switchml", "atp"])
def test_a_replay_does_the_recorded_switch_work(tmp_path: Path, protocol: str) -> None:
    built = jobreplay.job_program(protocol, 4, "ours", tmp_path)
    rec = jobreplay.record(protocol, built, 4, 2048)
    assert len(rec.ins) >= 2048 * 4 // 256 and rec.outs   # every rank's packets in, results out
    sw = rec.fresh_switch()
    outs = [o for port, frame in rec.ins for o in sw.process(port, frame)]
    assert outs == rec.outs


def test_bench_job_replay_reports_rate_and_shape() -> None:
    r = jobreplay.bench_job_replay("switchml_job", size=1024, repeats=1)
    assert r.program == "switchml_job" and r.compiler == "ours" and r.pps > 0 and r.packets > 0
    assert "tables" in r.shape and "switchml all-reduce" in r.how
    with pytest.raises(KeyError):
        jobreplay.bench_job_replay("nothing_job")
