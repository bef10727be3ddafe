"""perf.engine: the embedded engine's in-process rows really run the programs (numbers are not asserted)."""

from __future__ import annotations

import pytest

from perf.engine import bench_in_process, bench_loop, loaded_engine
from perf.workloads import AGG64, BASIC_FORWARD
from topo.frames import udp_frame
from topo.netns import FIXTURES
from worker.switchml.header import EXPONENT_BIAS, INA_UDP_PORT, Codec, InaHeader

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("prog", [BASIC_FORWARD, AGG64], ids=lambda p: p.key)
def test_in_process_and_loop_measure_the_program(prog) -> None:
    path = FIXTURES / f"{prog.key}.json"
    results = [bench_in_process(prog, path, 0.1), bench_loop(prog, path, 0.1)]
    assert [r.mode for r in results] == ["in-process", "loop"]
    assert all(r.packets >= 256 and r.pps > 0 and len(r.rates) == 5 and r.program == prog.key for r in results)


def test_agg64_frame_is_aggregated_by_the_engine() -> None:
    sw = loaded_engine(AGG64, FIXTURES / "agg64.json")
    codec = Codec.from_program_json(FIXTURES / "agg64.json")
    frame = udp_frame("02:00:00:00:00:fe", "02:00:00:00:01:01", "10.0.1.1", "10.0.2.2", 1, INA_UDP_PORT,
                      codec.encode(InaHeader(pool_index=5, packet_id=0, exponent=EXPONENT_BIAS), list(range(-32, 32))))
    sw.process(1, frame)
    [(port, out)] = sw.process(1, frame)
    assert port == 1 and out[42] == 2  # reflected as RESULT
    assert [int.from_bytes(out[54 + 4 * k:58 + 4 * k], "big", signed=True) for k in range(64)] == \
        [2 * v for v in range(-32, 32)]
    assert sw.registers["MyIngress.agg_07"].read(5) == (2 * (7 - 32)) & 0xFFFFFFFF
