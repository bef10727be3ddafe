"""Smoke test of the benchmark's in-process part and report writer (the veth part shares its machinery with
test_switch_veth.py). Numbers are not asserted: only that each measurement really ran the program."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from switch import bench

pytestmark = pytest.mark.timeout(60)


def test_in_process_measurements_and_report(tmp_path: Path) -> None:
    pytest.importorskip("switch.v1model")
    results = []
    for make in (bench.forward_workload, bench.agg_workload):
        w = make(*bench._fake_hosts())
        if not w.json_path.exists():
            pytest.skip(f"{w.json_path.name} not written yet")
        results.append(bench.bench_in_process(w, 0.1))
        results.append(bench.bench_loop(w, 0.1))
    assert all(r.packets >= 256 and r.delivered_pps > 0 for r in results)
    out = tmp_path / "switch.md"
    bench.write_report(results, out, bench.machine_info(), 0.1)
    text = out.read_text()
    assert "| basic_forward (IPv4 LPM) | in-process |" in text and "| agg64" in text and "## Machine" in text
    rows = list(csv.DictReader(open(tmp_path / "switch.csv")))
    assert [r["mode"] for r in rows] == ["in-process", "loop", "in-process", "loop"]


def test_agg64_frame_is_aggregated_by_the_engine() -> None:
    v1model = pytest.importorskip("switch.v1model")
    w = bench.agg_workload(*bench._fake_hosts())
    if not w.json_path.exists():
        pytest.skip("agg64.json not written yet")
    sw = v1model.V1Switch()
    sw.load(w.json_path.read_text())
    frame = bench.udp_frame("02:00:00:00:00:fe", "02:00:00:00:01:01", "10.0.1.1", "10.0.2.2", 1, bench.INA_UDP_PORT,
                            bench.ina_data(5, 0, list(range(-32, 32))))
    sw.process(1, frame)
    [(port, out)] = sw.process(1, frame)
    assert port == 1 and out[42] == 2  # reflected as RESULT
    assert [int.from_bytes(out[54 + 4 * k:58 + 4 * k], "big", signed=True) for k in range(64)] == \
        [2 * v for v in range(-32, 32)]
    assert sw.registers["MyIngress.agg_07"].read(5) == (2 * (7 - 32)) & 0xFFFFFFFF
