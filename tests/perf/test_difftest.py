"""perf.difftest: structured-random frames reach the program's parser paths and table entries; two switches that
agree are reported alike, a planted difference is found; the veth path (a switch process) agrees with the engine."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from perf import difftest
from perf.difftest import EngineSwitch, VethSwitch, frames, load_runtime, run_difftest
from perf.workloads import Compiled, compile_program
from tests.paths import TESTS

HERE = Path(__file__).parent / "difftest"
PROGRAM = TESTS / "p4" / "basic_forward.p4"
RUNTIME = HERE / "basic_forward-runtime.json"
CALC = TESTS / "compiler" / "p4" / "lookahead_header.p4"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    import sys
    return compile_program(PROGRAM, tmp_path_factory.mktemp("dt"), command=[sys.executable, "-m", "compiler"])


def test_frames_follow_the_parser_and_the_entries(compiled: Compiled) -> None:
    program = json.loads(compiled.json.read_text())
    rt = load_runtime(RUNTIME)
    got = frames(program, random.Random(3), 400, rt.key_values)
    ipv4 = [f for f in got if len(f) >= 34 and f[12:14] == b"\x08\x00"]
    assert len(ipv4) > 250  # the select's case taken most of the time, the default otherwise
    dsts = {f[30:34] for f in ipv4}
    assert bytes([10, 0, 1, 1]) in dsts and bytes([10, 0, 2, 0]) in dsts  # the entries' keys are drawn
    assert any(14 <= len(f) < 34 for f in got) and min(map(len, got)) >= 14  # some cut short


def test_lookahead_selects_are_satisfied() -> None:
    import sys
    c = compile_program(CALC, Path("/tmp/ina-difftest-test"), command=[sys.executable, "-m", "compiler"])
    program = json.loads(c.json.read_text())
    sw = EngineSwitch("e", c, load_runtime(None))
    outs = [sw.exchange(1, f) for f in frames(program, random.Random(5), 200)]
    assert sum(1 for o in outs if o) > 20


def test_two_equal_switches_agree_and_a_planted_difference_is_found(compiled: Compiled, tmp_path: Path) -> None:
    rt = load_runtime(RUNTIME)
    program = json.loads(compiled.json.read_text())
    rng = random.Random(1)
    inputs = [(rng.randrange(1, 5), f) for f in frames(program, rng, 300, rt.key_values)]
    same = run_difftest(EngineSwitch("a", compiled, rt), EngineSwitch("b", compiled, rt), inputs, "basic")
    assert same.ok and same.frames == 300 and same.outputs > 100, same.describe()
    # plant: ipv4_forward writes the port plus one
    planted = json.loads(compiled.json.read_text())
    act = next(a for a in planted["actions"] if a["name"].endswith("ipv4_forward"))
    for p in act["primitives"]:
        if p["op"] == "assign" and p["parameters"][0]["value"][1] == "egress_spec":
            p["parameters"][1] = {"type": "expression", "value": {"type": "expression", "value": {
                "op": "+", "left": p["parameters"][1], "right": {"type": "hexstr", "value": "0x0001"}}}}
    other = tmp_path / "planted.json"
    other.write_text(json.dumps(planted))
    diff = run_difftest(EngineSwitch("a", compiled, rt), EngineSwitch("planted", Compiled(other, compiled.p4info), rt),
                        inputs, "basic")
    assert not diff.ok and diff.same == same.frames - len(diff.differences) and len(diff.differences) > 50
    assert "planted [2:" in diff.differences[0] or "planted [3:" in diff.differences[0]


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = [str(PROGRAM), "--runtime", str(RUNTIME), "--packets", "100", "--work-dir", str(tmp_path)]
    assert difftest.main([*common, "--against", "self"]) == 0
    assert "100 of 100 frames alike" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text((tmp_path / "basic_forward" / "ours" / "basic_forward.json").read_text().replace('"0x0800"', '"0x0801"'))
    assert difftest.main([*common, "--against", "self", "--other-json", str(bad)]) == 1
    assert "frames alike" in capsys.readouterr().out


@pytest.mark.netns
@pytest.mark.timeout(240)
def test_the_switch_process_on_veths_agrees_with_its_engine(compiled: Compiled) -> None:
    import sys
    rt = load_runtime(RUNTIME)
    program = json.loads(compiled.json.read_text())
    rng = random.Random(9)
    inputs = [(rng.randrange(1, 4), f) for f in frames(program, rng, 60, rt.key_values)]
    veth = VethSwitch("process", [sys.executable, "-m", "switch"], compiled, rt, 3)
    try:
        rep = run_difftest(EngineSwitch("engine", compiled, rt, ports=3), veth, inputs, "basic")
    finally:
        veth.close()
    assert rep.ok and rep.outputs > 20, rep.describe()



def test_tutorial_solutions_are_found_with_their_entries(tmp_path: Path) -> None:
    for ex, rt in (("basic", "pod-topo/s1-runtime.json"), ("calc", "s1-runtime.json"),
                   ("multicast", "solution/s1-runtime.json"), ("flowcache", None)):
        (tmp_path / "exercises" / ex / "solution").mkdir(parents=True)
        (tmp_path / "exercises" / ex / "solution" / f"{ex}.p4").write_text("")
        if rt:
            (tmp_path / "exercises" / ex / rt).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "exercises" / ex / rt).write_text("{}")
    found = {p.stem: r.relative_to(tmp_path / "exercises" / p.stem).as_posix() if r else None
             for p, r in difftest.tutorial_programs(tmp_path)}
    assert found == {"basic": "pod-topo/s1-runtime.json", "calc": "s1-runtime.json",
                     "multicast": "solution/s1-runtime.json", "flowcache": None}


class _Dying:
    """A reference switch that sends what it is given until its process dies on the third frame."""

    name = "ref"

    def __init__(self) -> None:
        self.n = 0

    def exchange(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        self.n += 1
        return [(port, frame)] if self.n < 3 else []

    def exited(self, grace: float = 0.0) -> str | None:
        return "exit code -6" if self.n >= 3 else None


class _Echo:
    name = "echo"

    def exchange(self, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        return [(port, frame)]


def test_a_reference_that_dies_ends_the_comparison_with_the_reason() -> None:
    """simple_switch aborts on a failed assert(); the frames after it are not differences of the switch under test."""
    rep = run_difftest(_Echo(), _Dying(), [(1, bytes([i]) * 14) for i in range(6)], "p.p4")
    assert (rep.frames, rep.same, rep.differences) == (2, 2, [])
    assert not rep.ok and "ref stopped by frame 2 (exit code -6)" in rep.describe()


def test_p4c_samples_are_the_v1model_ones_with_an_stf_and_its_frames_go_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--p4c-samples`: a p4c checkout's v1model samples that have an STF test, each sent its STF's packets (ports
    folded into 0..N-1, frames shorter than Ethernet left out) before the random frames."""
    samples = tmp_path / "p4c" / "testdata" / "p4_16_samples"
    samples.mkdir(parents=True)
    source = PROGRAM.read_text()
    (samples / "fwd-bmv2.p4").write_text(source)
    (samples / "fwd-bmv2.stf").write_text("# a test\nadd ignored 1 2\npacket 0 00000000000a 00000000000b 0800 45\n"
                                           "expect 1 ***\npacket 6 " + "ab" * 13 + "\npacket 2 " + "cd" * 20 + "\n")
    (samples / "nostf-bmv2.p4").write_text(source)
    (samples / "psa.p4").write_text("#include <psa.p4>\n")
    (samples / "psa.stf").write_text("packet 0 00\n")
    found = difftest.sample_programs(tmp_path / "p4c")
    assert [(p.name, rt, stf.name if stf else None) for p, rt, stf in found] == [("fwd-bmv2.p4", None, "fwd-bmv2.stf")]
    assert [p.name for p, _, _ in difftest.sample_programs(samples, with_stf_only=False)] == ["fwd-bmv2.p4",
                                                                                            "nostf-bmv2.p4"]
    assert difftest.stf_frames(samples / "fwd-bmv2.stf", 4) == [
        (0, bytes.fromhex("00000000000a00000000000b080045")), (2, bytes.fromhex("cd" * 20))]
    assert difftest.main(["--p4c-samples", str(tmp_path / "p4c"), "--against", "self", "--packets", "20",
                          "--work-dir", str(tmp_path / "w")]) == 0
    assert "fwd-bmv2.p4: embedded vs embedded (again): 22 of 22 frames alike" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        difftest.main(["--p4c-samples", str(tmp_path / "nowhere"), "--against", "self"])
