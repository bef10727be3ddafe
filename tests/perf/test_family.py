"""perf.family: every generated program does the work it claims, byte for byte, on the embedded switch (compiled by
the embedded compiler; tests/test_p4c_parity.py style checks with p4c run where p4c-bm2-ss is installed)."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from perf import family
from perf.engine import bench_in_process, loaded_engine
from perf.workloads import FAMILY, SWITCH_MAC, agg_frame, compile_program, placeholder_hosts
from topo.frames import forwarded, udp_frame

pytestmark = pytest.mark.timeout(120)

AGG = [k for k in family.SOURCES if k.startswith("agg_")]
OURS = [sys.executable, "-m", "compiler"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("family")
    return {k: compile_program(p.source_in(work), work, command=OURS).json for k, p in FAMILY.items()}


def _elements(frame: bytes) -> list[int]:
    return [int.from_bytes(frame[54 + 4 * k:58 + 4 * k], "big", signed=True) for k in range(family.N)]


def _crc16_arc(data: bytes) -> int:
    """CRC-16/ARC (BMv2's crc16: polynomial 0x8005 reflected, initial value 0, no final xor)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def _model_slot(key: str, src_ip: str, pool_index: int) -> int:
    if key == "agg_hash":
        return _crc16_arc(bytes(int(x) for x in src_ip.split(".")) + pool_index.to_bytes(2, "big")) % 256
    return pool_index & 0xFF


def _signed(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


@pytest.mark.parametrize("key", AGG)
def test_aggregation_styles_sum_restart_and_reflect(compiled: dict[str, Path], key: str) -> None:
    """A random sequence over 5 pool indices (259 shares slot 3 with 3; agg_hash's slots are the model's CRC-16),
    some packets restarting their slot: every reflected packet carries the
    model's running sums, msg_type 2, on the ingress port; the rest of the frame is unchanged."""
    prog = FAMILY[key]
    h1, h2 = placeholder_hosts()
    sw = loaded_engine(prog, compiled[key])
    rng = random.Random(7)
    sums: dict[int, list[int]] = {}
    for n in range(40):
        pool, first = rng.choice([3, 4, 200, 255, 259]), rng.random() < 0.25
        elems = [rng.randrange(-2**31, 2**31) for _ in range(family.N)]
        frame = agg_frame(h1, h2, pool, elems, first)
        slot = _model_slot(key, h1.ip, pool)
        prev = [0] * family.N if first else sums.get(slot, [0] * family.N)
        sums[slot] = [_signed(a + b) for a, b in zip(prev, elems)]
        [(port, out)] = sw.process(1, frame)
        assert port == 1, (n, port)
        assert out[42] == 2 and out[:42] == frame[:42] and out[43:54] == frame[43:54], n
        assert _elements(out) == sums[slot], (key, n)


def test_aggregation_styles_drop_other_udp(compiled: dict[str, Path]) -> None:
    h1, h2 = placeholder_hosts()
    frame = udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 1, 4321, bytes(64))
    for key in AGG:
        assert loaded_engine(FAMILY[key], compiled[key]).process(1, frame) == [], key


def test_l2l3_acl_forwards_routes_and_denies(compiled: dict[str, Path]) -> None:
    h1, h2 = placeholder_hosts()
    sw = loaded_engine(FAMILY["l2l3_acl"], compiled["l2l3_acl"])
    frame = udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 1000, 4321, bytes(range(32)))
    want = forwarded(frame, h2.mac)
    want = want[:6] + bytes.fromhex(SWITCH_MAC.replace(":", "")) + want[12:]  # egress rewrites the source MAC
    assert sw.process(1, frame) == [(2, want)]
    back = udp_frame(SWITCH_MAC, h2.mac, h2.ip, h1.ip, 1000, 4321, b"x" * 20)
    assert [p for p, _ in sw.process(2, back)] == [1]
    assert sw.process(1, udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 1000, 23, b"x" * 20)) == []   # the ACL
    assert sw.process(1, udp_frame(SWITCH_MAC, h1.mac, h1.ip, h2.ip, 1000, 4321, b"x", ttl=1)) == []
    assert sw.process(1, udp_frame(SWITCH_MAC, h1.mac, h1.ip, "10.9.9.9", 1000, 4321, b"x")) == []  # no route
    assert sw.process(3, frame) == []                                                               # no VLAN


def test_every_program_is_measured_in_process(compiled: dict[str, Path]) -> None:
    """The bench's in-process row checks the first frame's result before it counts (a wrong program fails)."""
    for key, prog in FAMILY.items():
        r = bench_in_process(prog, compiled[key], 0.05, repeats=1)
        assert r.program == key and r.packets >= 256


def test_shape_counts_tables_and_conditionals(compiled: dict[str, Path]) -> None:
    shapes = {k: family.JsonShape.of(json.loads(p.read_text())) for k, p in compiled.items()}
    assert shapes["agg_action"].conditionals == 1 and shapes["agg_action"].tables == 2
    # one if/else per element: p4c's and our compiler's JSON both synthesize a keyless table per branch
    assert shapes["agg_ifelse"].conditionals == family.N + 1
    assert shapes["l2l3_acl"].tables >= 5


def test_sources_can_be_written_for_inspection(tmp_path: Path) -> None:
    assert family.main(["--out", str(tmp_path), "agg_ternary"]) == 0
    assert "? hdr.data.e00 : meta.v + hdr.data.e00" in (tmp_path / "agg_ternary.p4").read_text()
    with pytest.raises(SystemExit):
        family.main(["--out", str(tmp_path), "agg_nothing"])


@pytest.mark.skipif(shutil.which("p4c-bm2-ss") is None, reason="p4c-bm2-ss not installed")
@pytest.mark.parametrize("key", list(family.SOURCES))
def test_p4c_accepts_every_program_and_its_json_runs_alike(compiled: dict[str, Path], tmp_path: Path,
                                                            key: str) -> None:
    """p4c's JSON of the same source gives the same bytes for the same packets on the embedded switch."""
    prog = FAMILY[key]
    theirs = compile_program(prog.source_in(tmp_path), tmp_path, command=["p4c-bm2-ss"]).json
    ours, p4c = loaded_engine(prog, compiled[key]), loaded_engine(prog, theirs)
    for frame in prog.frames(*placeholder_hosts()) * 2:
        assert ours.process(1, frame) == p4c.process(1, frame)
