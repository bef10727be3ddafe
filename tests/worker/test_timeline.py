"""Timelines (switch.timeline, `--trace`): the events a reader of a run's trace relies on, in Chrome's trace-event
format, from the window cores, the worker CLI and the switch's packet loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler import compile_file
from switch.faults import FaultPlan, FaultRule
from switch.packet_timeline import PORT_TRACKS, PacketTimeline, parse_track
from switch.ports import MemoryPort, PacketLoop
from switch.timeline import Timeline, merge
from switch.v1model import V1Switch
from tests.paths import ROOT
from tests.worker.ina_engine import EngineSwitch, p4info, program_dict
from tests.worker.ina_fixtures import make_job
from tests.worker.ina_udpswitch import UdpRefSwitch, free_udp_ports, local_job
from topo.inprocess import InProcessNetwork, make_jobs
from worker.atp.header import AtpCodec
from worker.driver import WindowOptions
from worker.faults import compile_plan
from worker.job import JobConfig, PoolRange
from worker.verify import rank_input

OPTIONS = WindowOptions(window=4, timeout=0.02, min_timeout=0.005, max_timeout=0.2, max_retries=50,
                        fast_retransmit=0)


def on_track(tl: Timeline, tid: int) -> list[dict]:
    return [e for e in tl.events if e.get("tid") == tid]


@pytest.fixture(scope="module")
def switchml() -> object:
    return compile_file(str(ROOT / "p4src" / "switchml.p4"))


def test_a_dropped_packet_shows_a_timeout_then_its_retransmission_on_its_slot(switchml) -> None:
    """The fault plan drops rank 1's first DATA packet in slot 2: on rank 1's track of slot 2 the timeout comes, then
    the retransmission of that packet, then the packet's span ends with its result."""
    job = make_jobs(1, 2, 64, PoolRange(0, 8))[0]
    plan = compile_plan({"seed": 1, "fault": [{"action": "drop", "kind": "data", "rank": 1, "slot": 2, "nth": [1]}]},
                        job, switchml.json)
    timelines = [Timeline(f"worker {r}", pid=r + 1) for r in range(2)]
    net = InProcessNetwork(switchml.json, [job], p4info=switchml.p4info, faults=FaultPlan.from_json(plan),
                           options=OPTIONS, timelines={(job.job_id, r): t for r, t in enumerate(timelines)})
    run = net.allreduce({1: [rank_input(64 * 12, 4, r, "int32") for r in range(2)]}, dtype="int32")[1]
    assert run.windows[1].stats.timeouts >= 1
    events = on_track(timelines[1], 2 + 1)
    kinds = [e["name"] for e in events if e["ph"] == "i"]
    assert kinds[:2] == ["timeout", "retransmit"]
    timeout, retx = [e for e in events if e["ph"] == "i"][:2]
    assert timeout["args"]["packet"] == retx["args"]["packet"] == 2  # the first use of slot 2: packet 2
    assert retx["args"]["why"] == "timeout" and timeout["ts"] <= retx["ts"]
    span = next(e for e in events if e["ph"] == "X" and e["args"]["packet"] == 2)
    assert span["args"]["retransmissions"] == 1 and span["ts"] + span["dur"] >= retx["ts"]
    # rank 0's packet of that slot has no retransmission of its own to show, every slot has its track
    names = {e["args"]["name"] for e in timelines[1].to_json()["traceEvents"] if e["name"] == "thread_name"}
    assert {f"slot {s}" for s in range(4)} <= names


def test_events_are_chrome_trace_events(tmp_path: Path) -> None:
    tl = Timeline("worker 0", pid=1)
    tl.track(3, "slot 2")
    tl.span("packet 7", 3, 1.0, 1.0025, "packet", packet=7)
    tl.instant("timeout", 3, 1.001, "timeout", packet=7)
    tl.counter("window", 1.002, packets=12)
    tl.write(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    span = next(e for e in doc["traceEvents"] if e["ph"] == "X")
    assert span == {"name": "packet 7", "ph": "X", "ts": 1000000.0, "dur": 2500.0, "pid": 1, "tid": 3,
                    "cat": "packet", "args": {"packet": 7}}
    inst = next(e for e in doc["traceEvents"] if e["ph"] == "i")
    assert inst["s"] == "t" and inst["ts"] == 1001000.0
    assert {"name": "thread_name", "ph": "M", "pid": 1, "tid": 3, "args": {"name": "slot 2"}} in doc["traceEvents"]


def test_a_full_timeline_counts_what_it_leaves_out() -> None:
    tl = Timeline("x", max_events=2)
    for i in range(5):
        tl.instant("e", 1, float(i))
    assert len(tl.events) == 2 and tl.dropped_events == 3 and tl.to_json()["otherData"]["dropped_events"] == 3


def test_merge_gives_each_file_its_process_and_starts_at_zero(tmp_path: Path) -> None:
    a, b = Timeline("switch", pid=0), Timeline("worker 0", pid=1)
    a.instant("fault: drop", 1, 10.0)
    b.span("packet 0", 1, 9.5, 10.5)
    a.write(tmp_path / "a.json")
    b.write(tmp_path / "b.json")
    doc = merge([tmp_path / "a.json", tmp_path / "b.json", tmp_path / "crashed.json"], tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text()) == doc
    timed = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    assert sorted((e["pid"], e["ts"]) for e in timed) == [(0, 500000.0), (1, 0.0)]
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert procs == {0: "switch", 1: "worker 0"}
    assert doc["otherData"]["missing"] == [str(tmp_path / "crashed.json")]


def test_switch_timeline_tracks_frames_by_field_and_shows_fault_actions() -> None:
    """The packet loop with --trace: a span per frame on the track of its field's value, named after where it went,
    the fields in and out as args; the fault plan's drop as an instant on the port's track."""
    sw = V1Switch()
    sw.load(compile_file(ROOT / "tests" / "compiler" / "p4" / "invalid_header_fields.p4").json)
    tl = PacketTimeline(sw, "ipv4.src&0xff", ["tcp.sport"])
    eth = bytes.fromhex("000000000001" "000000000002")
    tcp = eth + bytes.fromhex("0800" "45010000" "00000000" "40060000" "0a000001" "0a000002" "1234" "5678")
    faults = FaultPlan([FaultRule(action="drop", direction="in", nth=frozenset({2}))])
    p0, p1 = MemoryPort(0), MemoryPort(1)
    loop = PacketLoop(sw, [p0, p1], faults=faults, timeline=tl)
    try:
        for f in (tcp, tcp, eth + bytes.fromhex("9000" "aa")):
            p0.feed(f)
            loop.run_once(0)
    finally:
        loop.close()
    ev = tl.timeline.events
    spans = [e for e in ev if e["ph"] == "X"]
    assert [e["name"] for e in spans] == ["to port 1", "to port 1"]
    assert spans[0]["tid"] == 0x01 + 1 and spans[0]["args"]["tcp.sport"] == 0x1234
    assert spans[0]["args"]["out.tcp.sport"] == 0x1234 and spans[0]["args"]["out_ports"] == [1]
    assert spans[1]["tid"] == PORT_TRACKS + 0  # not IPv4: no track field, the port's track
    drop = next(e for e in ev if e["ph"] == "i")
    assert drop["name"] == "fault: drop" and drop["args"] == {"direction": "in", "port": 0}
    names = {e["args"]["name"] for e in tl.timeline.metadata() if e["name"] == "thread_name"}
    assert names == {"ipv4.src 1", "port 0"}


def test_track_spec_is_checked() -> None:
    assert parse_track("ina.pool_index&0x7fff") == ("ina.pool_index", 0x7FFF)
    assert parse_track("atp.agtr") == ("atp.agtr", None)
    for bad in ("pool_index", "ina.pool_index&x", "a.b.c"):
        with pytest.raises(ValueError):
            parse_track(bad)


def test_worker_cli_writes_its_timeline(tmp_path: Path) -> None:
    """`python -m worker --trace` over UDP through the compiled program: a track for the all-reduce and one per slot,
    a span per packet."""
    prog = program_dict(16, 64)
    program_path = tmp_path / "switchml.json"
    program_path.write_text(json.dumps(prog))
    job = local_job(2, num_elems=16, size=16)
    job.save(tmp_path / "job.json")
    with UdpRefSwitch(EngineSwitch(prog, job, p4info(16, 64))) as server:
        procs = [subprocess.Popen(
            [sys.executable, "-m", "worker", "--job", str(tmp_path / "job.json"), "--rank", str(r), "--program-json",
             str(program_path), "--switch-port", str(server.address[1]), "--size", "800", "--dtype", "int32", "--window", "4",
             "--trace", str(tmp_path / f"w{r}.json")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True) for r in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    doc = json.loads((tmp_path / "w1.json").read_text())
    tracks = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert tracks == {"all-reduce", "slot 0", "slot 1", "slot 2", "slot 3"}
    packets = [e for e in doc["traceEvents"] if e.get("cat") == "packet"]
    assert sorted(e["args"]["packet"] for e in packets) == list(range(800 // 16))


def test_worker_cli_writes_its_timeline_when_the_switch_is_gone(tmp_path: Path) -> None:
    d = make_job(1, num_elems=16, size=16).to_dict()
    d["switch"]["ip"] = "127.0.0.1"
    d["workers"][0]["ip"], d["workers"][0]["udp_port"] = "127.0.0.1", free_udp_ports(1)[0]
    JobConfig.from_dict(d).save(tmp_path / "job.json")
    prog = tmp_path / "switchml.json"
    prog.write_text(json.dumps(program_dict(16, 64)))
    res = subprocess.run([sys.executable, "-m", "worker", "--job", str(tmp_path / "job.json"), "--rank", "0",
                          "--program-json", str(prog), "--switch-port", str(free_udp_ports(1)[0]), "--size", "32",
                          "--max-retries", "1", "--timeout-ms", "20", "--max-timeout-ms", "40", "--trace",
                          str(tmp_path / "w.json")], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stderr
    names = [e["name"] for e in json.loads((tmp_path / "w.json").read_text())["traceEvents"]]
    assert "gave up" in names and names.count("timeout") >= 2 and "retransmit" in names


def test_atp_windows_record_collisions_and_aggregator_tracks() -> None:
    """Two ATP jobs on one small shared pool collide: the ACKs that say so are instants on the aggregator's track,
    every packet a span from its first transmission to its ACK."""
    compiled = compile_file(str(ROOT / "p4src" / "atp.p4"))
    jobs = make_jobs(2, 2, AtpCodec.from_program_json(compiled.json).num_elems, PoolRange(0, 4), ps=True)
    timelines = {(j.job_id, r): Timeline(f"job {j.job_id} worker {r}") for j in jobs for r in range(2)}
    net = InProcessNetwork(compiled.json, jobs, p4info=compiled.p4info, seed=3, timelines=timelines)
    n = jobs[0].num_elems * 40
    runs = net.allreduce({j.job_id: [rank_input(n, j.job_id, r, "int32") for r in range(2)] for j in jobs},
                         dtype="int32")
    collisions = sum(w.stats.collisions for run in runs.values() for w in run.windows)
    assert collisions > 0
    recorded = [e for tl in timelines.values() for e in tl.events if e["name"] == "collision"]
    assert len(recorded) == collisions
    tl = timelines[1, 0]
    spans = [e for e in tl.events if e["ph"] == "X"]
    assert len(spans) == 40 and {e["args"]["seq"] for e in spans} == set(range(1, 41))
    names = {e["args"]["name"] for e in tl.metadata() if e["name"] == "thread_name"}
    assert names and all(name.startswith("aggregator ") for name in names)
