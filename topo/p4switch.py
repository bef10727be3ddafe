"""P4Switch: a Mininet switch node running a v1model switch process with a P4Runtime server.

The process is `python -m switch` (embedded target) or `simple_switch_grpc` (real BMv2), started with identical
flags: one `-i PORT@INTF` per interface, `--device-id`, optional `--log-console`/`--pcap`, the program JSON or
`--no-p4`, then `-- --grpc-server-addr 127.0.0.1:PORT --cpu-port N` (and with `tls`, a `topo.tls.CertDir`,
`--grpc-server-ssl` with its files and `--grpc-server-with-client-auth`: P4Runtime over TLS, client certificates
required). `start()` waits, bounded in time, until the gRPC port accepts connections; if the switch exits or never
comes up it raises `SwitchStartError` quoting the switch's own last log lines (never an opaque "did not start
correctly"), and it refuses to start on a gRPC port that another process already serves. With a `CpuLayout` that
splits the CPUs, the process runs on the CPU the layout gives this switch (`taskset`, in the command line the log
shows).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from mininet.node import Switch

from topo.cpus import CpuLayout
from topo.switchproc import SwitchStartError, port_open, wait_serving
from topo.target import Target
from topo.tls import CertDir

LOG_TAIL_LINES = 20


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a log file, or a note that it is empty/missing."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    tail = text.strip().splitlines()[-lines:]
    return "\n".join(tail) if tail else f"(log {path} is empty)"


class P4Switch(Switch):
    """A Mininet switch backed by a P4 software switch process (embedded or BMv2)."""

    def __init__(
        self,
        name: str,
        *,
        target: Target | str | None = None,
        json_path: str | None = None,
        device_id: int | None = None,
        grpc_port: int | None = None,
        thrift_port: int | None = None,
        cpu_port: int | None = 255,
        log_dir: str = "/tmp/ina-testbed",
        log_console: bool = False,
        pcap_dir: str | None = None,
        startup_timeout: float = 20.0,
        seed: int | None = None,
        fault_plan: str | None = None,
        cpu_layout: CpuLayout | None = None,
        timeline: tuple[str, str | None, tuple[str, ...]] | None = None,
        tls: CertDir | None = None,
        **params: Any,
    ) -> None:
        super().__init__(name, **params)
        self.target = target if isinstance(target, Target) else Target.choose(target)
        self.json_path = json_path
        self.device_id = device_id if device_id is not None else int(self.dpid, 16)
        self.grpc_port = grpc_port if grpc_port is not None else 9559 + self.device_id - 1
        self.thrift_port = thrift_port if thrift_port is not None else 9090 + self.device_id - 1
        self.cpu_port = cpu_port
        self.log_path = Path(log_dir) / f"{name}.log"
        self.log_console = log_console
        self.pcap_dir = pcap_dir
        self.startup_timeout = startup_timeout
        self.seed = seed
        """Seed of the program's random() (embedded switch only: simple_switch has no such flag)."""
        if fault_plan is not None and self.target is not Target.EMBEDDED:
            raise ValueError("fault plans are applied by the embedded switch (simple_switch_grpc has no such flag)")
        self.fault_plan = fault_plan
        """A switch.faults plan file (embedded switch only)."""
        self.cpu_layout = cpu_layout or CpuLayout()
        """Where the process runs: the layout's CPU for switch number device_id - 1 (shared: anywhere)."""
        self.process: subprocess.Popen[bytes] | None = None
        if timeline is not None and self.target is not Target.EMBEDDED:
            timeline = None  # simple_switch writes no timeline (its --log-file is the nearest thing)
        self.timeline = timeline
        """(directory, track field, fields): the embedded switch's `--trace DIR/switch-<name>.json`, `--trace-track`,
        `--trace-field`."""
        self.tls = tls
        """P4Runtime over TLS with these certificates, client auth on (both targets); None: plaintext."""

    @property
    def grpc_address(self) -> str:
        """Where the switch's P4Runtime server listens."""
        return f"127.0.0.1:{self.grpc_port}"

    def port_map(self) -> dict[int, str]:
        """Switch port number → interface name, for the data-plane interfaces."""
        return {port: intf.name for port, intf in sorted(self.intfs.items()) if intf.name != "lo"}

    def argv(self) -> list[str]:
        """The switch command line (the same flags for both targets; --thrift-port for BMv2 only)."""
        args = list(self.target.switch_argv0())
        for port, intf in self.port_map().items():
            args += ["-i", f"{port}@{intf}"]
        args += ["--device-id", str(self.device_id)]
        if self.target is Target.BMV2:  # the embedded switch has no Thrift server (registers go over P4Runtime)
            args += ["--thrift-port", str(self.thrift_port)]
        if self.log_console:
            args.append("--log-console")
        if self.pcap_dir:
            args += ["--pcap", self.pcap_dir]
        if self.seed is not None and self.target is Target.EMBEDDED:
            args += ["--seed", str(self.seed)]
        if self.fault_plan is not None:
            args += ["--fault-plan", self.fault_plan]
        if self.timeline is not None:
            directory, track, fields = self.timeline
            args += ["--trace", str(Path(directory) / f"switch-{self.name}.json"),
                     *(["--trace-track", track] if track else [])]
            args += [a for f in fields for a in ("--trace-field", f)]
        args.append(self.json_path if self.json_path else "--no-p4")
        args += ["--", "--grpc-server-addr", self.grpc_address]
        if self.tls is not None:
            args += self.tls.switch_args(client_auth=True)
        if self.cpu_port is not None:
            args += ["--cpu-port", str(self.cpu_port)]
        return args

    def start(self, controllers: list[Any]) -> None:
        """Start the switch process on this node's interfaces and wait until its gRPC port accepts connections."""
        if port_open(self.grpc_address):
            # readiness is "the port accepts connections": a leftover switch there would pass for this one, and the
            # job would be installed on it while this switch exits with "address in use"
            raise SwitchStartError(
                f"{self.name}: gRPC port {self.grpc_port} is already in use by another process (a switch left over "
                f"from an earlier run? `ss -ltnp 'sport = :{self.grpc_port}'` names it; stop it or pick another "
                "port)")
        for intf in self.port_map().values():
            self.cmd(f"ethtool -K {intf} tx off rx off sg off tso off gso off gro off >/dev/null 2>&1")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = self.cpu_layout.switch_argv(self.argv(), self.device_id - 1)
        with self.log_path.open("wb") as log:
            log.write(("$ " + " ".join(argv) + "\n").encode())
            log.flush()
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        assert self.process is not None
        try:
            wait_serving(self.process, lambda: port_open(self.grpc_address), self.startup_timeout,
                         f"{self.name}: switch", f"gRPC port {self.grpc_port} not open",
                         lambda: f"last lines of {self.log_path}:\n{log_tail(self.log_path)}", poll=0.1)
        except SwitchStartError:
            self.stop_process()
            raise

    def connected(self) -> bool:
        """True while the switch process runs and its gRPC port accepts connections."""
        if self.process is None or self.process.poll() is not None:
            return False
        return port_open(self.grpc_address)

    def stop_process(self, timeout: float = 5.0) -> None:
        """Terminate the switch process (SIGTERM, then SIGKILL after `timeout`)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        """Stop the switch process, then let Mininet remove the interfaces."""
        self.stop_process()
        super().stop(deleteIntfs)
