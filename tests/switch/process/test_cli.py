"""`python -m switch` command line: simple_switch_grpc's flags, and startup failures as one stderr line + exit 1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from switch.__main__ import DEFAULT_GRPC_ADDR, parse_args
from topo.netns import REPO, free_tcp_port

pytestmark = pytest.mark.timeout(60)


def _engine_available() -> bool:
    try:
        from switch.v1model import V1Switch  # noqa: F401
    except ImportError:
        return False
    return True


needs_engine = pytest.mark.skipif(not _engine_available(), reason="switch.v1model.V1Switch not available yet")


def _switch(*args: str, timeout: float = 30, user: list[str] | None = None) -> subprocess.CompletedProcess:
    argv = [*(user or []), sys.executable, "-m", "switch", *args]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def _one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and lines[0].startswith("switch: error: ")
    return lines[0]


def test_help_lists_simple_switch_grpc_flags() -> None:
    r = _switch("--help")
    assert r.returncode == 0
    for flag in ("--interface", "--pcap", "--thrift-port", "--device-id", "--log-console", "--log-file",
                 "--log-level", "--no-p4", "--grpc-server-addr", "--cpu-port", "--drop-port", "--strict-bmv2"):
        assert flag in r.stdout, flag
    assert "'--'" in r.stdout  # the general/target separator is explained


def test_parse_bmv2_style_command_line() -> None:
    o = parse_args(["--no-p4", "-i", "1@veth1", "--interface", "2@veth2", "--device-id", "3", "--log-console",
                    "--thrift-port", "9090", "--pcap", "--", "--grpc-server-addr", "0.0.0.0:50051",
                    "--cpu-port", "255", "--drop-port", "510", "--strict-bmv2"])
    assert o.no_p4 and o.config is None
    assert o.interfaces == [(1, "veth1"), (2, "veth2")]
    assert (o.device_id, o.log_console, o.pcap, o.thrift_port) == (3, True, ".", 9090)
    assert (o.grpc_addr, o.cpu_port, o.drop_port, o.strict_bmv2) == ("0.0.0.0:50051", 255, 510, True)
    d = parse_args(["prog.json", "--drop-port", "500"])
    assert (d.config, d.grpc_addr, d.cpu_port, d.drop_port, d.strict_bmv2) == \
        ("prog.json", DEFAULT_GRPC_ADDR, None, 500, False)
    assert DEFAULT_GRPC_ADDR.startswith("127.0.0.1:")
    p = parse_args(["--pcap", "prog.json", "-i", "1@a"])
    assert (p.pcap, p.config) == (".", "prog.json")
    w = parse_args(["--no-p4", "ignored.json"])
    assert w.config is None and any("ignoring input config" in x for x in w.warnings)


@pytest.mark.parametrize("argv, message", [
    ([], "please specify an input JSON configuration file"),
    (["--no-p4", "-i", "veth1"], "is not <port-num>@<interface-name>"),
    (["--no-p4", "-i", "x@veth1"], "is not a port number"),
    (["--no-p4", "--", "--cpu-port", "0"], "0 is not a valid value for --cpu-port"),
    (["--no-p4", "--log-console", "--log-file", "x"], "exclusive"),
    (["--no-p4", "--", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_usage_errors(argv: list[str], message: str) -> None:
    assert message in _one_error_line(_switch(*argv))


def test_json_that_cannot_be_read_or_parsed(tmp_path: Path) -> None:
    port = str(free_tcp_port())
    line = _one_error_line(_switch(str(tmp_path / "missing.json"), "--", "--grpc-server-addr", f"127.0.0.1:{port}"))
    assert "cannot read JSON config" in line and "missing.json" in line and "No such file" in line
    bad = tmp_path / "bad.json"
    bad.write_text('{"header_types": [}')
    line = _one_error_line(_switch(str(bad), "--", "--grpc-server-addr", f"127.0.0.1:{port}"))
    assert "bad.json' is not valid JSON" in line and "at line 1 column 19" in line


@needs_engine
def test_json_the_engine_refuses(tmp_path: Path) -> None:
    bad = tmp_path / "unsupported.json"
    bad.write_text('{"__meta__": {"version": [2, 23]}, "header_types": "not a list"}')
    line = _one_error_line(_switch(str(bad), "--", "--grpc-server-addr", f"127.0.0.1:{free_tcp_port()}"))
    assert "cannot load JSON config" in line and "unsupported.json" in line


def test_pcap_directory_must_exist(tmp_path: Path) -> None:
    line = _one_error_line(_switch("--no-p4", "--pcap", str(tmp_path / "nope")))
    assert "specified with '--pcap' does not exist" in line


@needs_engine
@pytest.mark.netns
def test_missing_interface() -> None:
    line = _one_error_line(_switch("--no-p4", "-i", "1@nosuchif7", "--", "--grpc-server-addr",
                                   f"127.0.0.1:{free_tcp_port()}"))
    assert line == "switch: error: interface 'nosuchif7' (port 1) does not exist"


def test_grpc_port_in_use() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = _one_error_line(_switch("--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{port}"))
    assert line == f"switch: error: gRPC server address 127.0.0.1:{port} is already in use"


@needs_engine
def test_second_switch_on_the_same_grpc_port() -> None:
    # grpc binds with SO_REUSEPORT by default: without care a second server would silently share the port
    from topo.netns import SwitchProcess

    port = free_tcp_port()
    first = SwitchProcess(["--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{port}"])
    try:
        line = _one_error_line(_switch("--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{port}"))
        assert line == f"switch: error: gRPC server address 127.0.0.1:{port} is already in use"
        assert first.proc.poll() is None
    finally:
        first.stop()


def test_bad_grpc_address() -> None:
    assert "is not HOST:PORT" in _one_error_line(_switch("--no-p4", "--", "--grpc-server-addr", "localhost"))


@needs_engine
@pytest.mark.netns
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_not_root_for_af_packet() -> None:
    # as nobody, opening an AF_PACKET socket on lo is refused by the kernel
    r = _switch("--no-p4", "-i", "1@lo", "--", "--grpc-server-addr", f"127.0.0.1:{free_tcp_port()}",
                user=["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"])
    if "Permission denied" in r.stderr and "python" in r.stderr.lower() and "switch: error" not in r.stderr:
        pytest.skip("the venv is not readable by nobody here")
    assert "needs root or CAP_NET_RAW" in _one_error_line(r)


@needs_engine
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_serves_then_exits_cleanly_on_signal(sig: str) -> None:
    import re
    import signal

    from topo.netns import SwitchProcess

    sw = SwitchProcess(["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0"])
    try:
        m = re.fullmatch(r"Server listening on 127\.0\.0\.1:(\d+)", sw.lines[-1])
        assert m and int(m.group(1)) > 0  # port 0 → the bound port is printed
        with socket.create_connection(("127.0.0.1", int(m.group(1))), timeout=5):
            pass
        sw.proc.send_signal(getattr(signal, sig))
        assert sw.proc.wait(10) == 0
    finally:
        err = sw.stop()
    assert err == ""


@needs_engine
def test_strict_bmv2_flag_reaches_the_p4runtime_server(tmp_path: Path) -> None:
    import finsy
    import grpc

    from controller.client import ControllerError, P4RuntimeClient
    from topo.netns import SwitchProcess

    # a program with registers, compiled now by the embedded compiler (the P4Info carries the register ids)
    r = subprocess.run([sys.executable, "-m", "compiler", "tests/p4/agg64.p4", "-o", str(tmp_path / "agg64.json"),
                        "--p4runtime-files", str(tmp_path / "agg64.p4info.txt")], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"compiler cannot build tests/p4/agg64.p4 yet: {r.stderr.strip()[-300:]}")
    for strict in (False, True):
        port = free_tcp_port()
        sw = SwitchProcess(["--no-p4", "--", "--grpc-server-addr", f"127.0.0.1:{port}",
                            *(["--strict-bmv2"] if strict else [])])
        try:
            c = P4RuntimeClient(f"127.0.0.1:{port}").connect()
            c.set_pipeline(tmp_path / "agg64.p4info.txt", tmp_path / "agg64.json")
            entity = finsy.P4RegisterEntry("MyIngress.agg_03", index=7)
            if strict:
                with pytest.raises(ControllerError) as err:
                    c.read(entity)
                assert err.value.code is grpc.StatusCode.UNIMPLEMENTED
            else:
                [e] = c.read(entity)
                assert (e.index, int(e.data)) == (7, 0)
            c.close()
        finally:
            sw.stop()
        assert sw.proc.returncode == 0


def test_seed_option() -> None:
    assert parse_args(["--no-p4", "--seed", "42"]).seed == 42
    assert parse_args(["--no-p4"]).seed is None
    assert "'-1' is negative" in _one_error_line(_switch("--no-p4", "--seed", "-1"))


@needs_engine
def test_startup_prints_the_seed_to_replay() -> None:
    from topo.netns import SwitchProcess

    for argv, expect in ((["--seed", "7"], "Random seed 7 (replay with --seed 7)"), ([], "Random seed ")):
        sw = SwitchProcess(["--no-p4", *argv, "--", "--grpc-server-addr", "127.0.0.1:0"])
        try:
            assert any(line.startswith(expect) for line in sw.lines), sw.lines
        finally:
            sw.stop()


def test_bad_fault_plan_is_one_clear_error(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"rules": [{"action": "explode"}]}')
    line = _one_error_line(_switch("--no-p4", "--fault-plan", str(plan), "--", "--grpc-server-addr", "127.0.0.1:0"))
    assert "rules[0]" in line and "action must be one of drop, duplicate, delay, corrupt" in line
    assert "cannot read fault plan" in _one_error_line(
        _switch("--no-p4", "--fault-plan", str(tmp_path / "none.json"), "--", "--grpc-server-addr", "127.0.0.1:0"))


@needs_engine
def test_fault_plan_is_printed_with_its_seed_and_totals_at_exit(tmp_path: Path) -> None:
    from topo.netns import SwitchProcess

    plan = tmp_path / "plan.json"
    plan.write_text('{"rules": [{"action": "drop", "direction": "in", "probability": 0.5}]}')
    sw = SwitchProcess(["--no-p4", "--seed", "9", "--fault-plan", str(plan), "--",
                        "--grpc-server-addr", "127.0.0.1:0"])
    try:
        assert "fault plan (seed 9): 1 rules, 0 events" in sw.lines, sw.lines
        assert any('"probability": 0.5' in line for line in sw.lines)
    finally:
        err = sw.stop()
    assert sw.proc.returncode == 0, err
