"""Network: a running Mininet network of P4 switches, programmed by their controllers — the network an experiment
runs on, without the workload (Mininet keeps workloads out of its `Mininet` too).

    with Network(StarFabric(4), target=Target.EMBEDDED, program_files=(json, p4info), run_dir=d) as net:
        net.install(jobs)                      # every switch's role in each job (fabric.install_job)
        net.reset(jobs, loss=0.01)             # before a run: jobs' switch state cleared, simulated loss set
        ... run processes on net.hosts ...
        net.counters(job_id), net.link_stats()

The fabric (topo.star, topo.twotier) gives the shape; each switch is a `topo.p4switch.P4Switch` process (embedded or
BMv2) on its own CPU where the layout allows (topo.cpus); the program's controller (controller.programs) pushes the
pipeline, the L2 entries and the ECN threshold. With `tls` (a certificate directory, made if missing: topo.tls) every
switch serves P4Runtime over TLS with client auth, and the controllers connect with the CA and client certificate.
Holds MININET_LOCK while open.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from mininet.link import Link, TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet

from controller.base import ProgramController
from controller.client import P4RuntimeClient
from controller.programs import controller_for
from controller.registers import open_registers
from topo.cpus import CpuLayout
from topo.fabric import Fabric
from topo.p4switch import P4Switch
from topo.star import check_link_rates, prepare_hosts, set_queue_limits
from topo.target import Target
from topo.tls import CertDir
from worker.job import JobConfig
from worker.protocols import PROTOCOLS
from worker.schedstat import SchedTimes, sched_times

__all__ = ["MININET_LOCK", "Network", "PortCounters", "TransportCounters", "kill_namespace_processes", "tcp_states",
           "mininet_lock"]

MININET_LOCK = Path("/tmp/ina-testbed-mininet.lock")
"""Held while a network exists: Mininet names interfaces h1-eth0, s1-eth1... in the root namespace, so two networks
at once (a test run and `make bench`, say) would collide."""


@contextlib.contextmanager
def mininet_lock(wait_s: float = 600.0) -> Iterator[None]:
    """Hold MININET_LOCK (an flock, released when the process dies); RuntimeError after wait_s seconds."""
    with open(MININET_LOCK, "a") as f:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"another Mininet experiment held {MININET_LOCK} for {wait_s:.0f} s") from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class PortCounters(NamedTuple):
    """A switch port's kernel counters (veth statistics); subtract two readings for a run's share."""

    rx_frames: int
    rx_bytes: int
    tx_bytes: int
    drops: int
    """rx_dropped + tx_dropped: frames the kernel dropped there (the emulator's drops, not the simulated loss)."""

    def __sub__(self, other: tuple[int, ...]) -> PortCounters:
        return PortCounters(*(a - b for a, b in zip(self, other)))


class TransportCounters(NamedTuple):
    """What a host's transport lost and repaired (its namespace's counters, as `nstat` reads them, and its link's
    qdiscs); subtract two readings for a run's share."""

    tcp_out_segs: int
    tcp_retrans_segs: int
    tcp_timeouts: int
    """TcpExt TCPTimeouts: retransmission timer expiries (a stall of at least one RTO, 200 ms minimum on Linux)."""
    queue_drops: int
    """Packets the rate-limiting qdiscs (htb) at either end of the host's link dropped: a full queue."""

    def __sub__(self, other: tuple[int, ...]) -> TransportCounters:  # type: ignore[override]
        return TransportCounters(*(a - b for a, b in zip(self, other)))


def _proc_counters(path: Path) -> dict[str, dict[str, int]]:
    """/proc/net/snmp or /proc/net/netstat (pairs of lines: `Tcp: names...` then `Tcp: values...`) as
    {"Tcp": {"OutSegs": n, ...}}; empty if unreadable."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    out: dict[str, dict[str, int]] = {}
    for names, values in zip(lines[::2], lines[1::2]):
        kind, _, keys = names.partition(":")
        vals = values.partition(":")[2].split()
        try:
            out[kind] = {k: int(v) for k, v in zip(keys.split(), vals)}
        except ValueError:
            continue
    return out


def _qdisc_drops(intf: str, pid: int | None = None) -> int:
    """Drops of the root qdisc of `intf` (`tc -s qdisc`), in the network namespace of process `pid` (None: this
    one); 0 if tc cannot tell."""
    argv = ["tc", "-s", "-j", "qdisc", "show", "dev", intf]
    if pid is not None:
        argv = ["nsenter", f"--net=/proc/{pid}/ns/net", *argv]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
        return sum(int(q.get("drops", 0)) for q in json.loads(out or "[]") if q.get("root"))
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0


def kill_namespace_processes(hosts: Sequence[Any]) -> list[int]:
    """SIGKILL every process in the hosts' network namespaces but their shells; the pids killed.

    Mininet stops a host by hanging up its shell's process group, but what runs there was started detached
    (`mnexec -d`: a session of its own): the workers of a run that a Ctrl-C cut short would outlive the network."""
    shells: dict[str, int] = {}
    for h in hosts:
        with contextlib.suppress(OSError, TypeError):  # a shell that never started, or is gone
            shells[os.readlink(f"/proc/{h.pid}/ns/net")] = h.pid
    shells.pop(os.readlink("/proc/self/ns/net"), None)  # a host outside a namespace shares ours: never kill there
    killed = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in shells.values():
            continue
        with contextlib.suppress(OSError):  # gone meanwhile
            if os.readlink(proc / "ns" / "net") in shells:
                os.kill(int(proc.name), signal.SIGKILL)
                killed.append(int(proc.name))
    return killed


def _statistics(intf: str, *names: str) -> list[int]:
    """Counters of a network interface of this namespace (/sys/class/net/INTF/statistics/NAME)."""
    stats = Path("/sys/class/net") / intf / "statistics"
    return [int((stats / n).read_text()) for n in names]


_CLOSING = {"04", "08", "09", "0B"}
"""TCP states of a closed connection that may still send (/proc/net/tcp's st): FIN_WAIT1, CLOSE_WAIT, LAST_ACK,
CLOSING."""


def tcp_states(pid: int) -> list[tuple[int, str]]:
    """(local port, state) of every TCP socket in the network namespace of process pid (/proc/PID/net/tcp{,6}; the
    state in hex, as the kernel's TCP_* numbers)."""
    out = []
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            out.append((int(fields[1].rsplit(":", 1)[1], 16), fields[3]))
    return out


class Network:
    """The fabric's network running, every switch programmed with `program_files` by `program`'s controller."""

    def __init__(self, fabric: Fabric, *, target: Target, program: str, program_files: tuple[Path, Path],
                 run_dir: Path, cpus: str = "split", seed: int = 1, bw: float | None = None,
                 fault_plan: Path | None = None, ecn_threshold: int | None = None, queue_packets: int | None = None,
                 pcap_dir: Path | None = None, trace_dir: Path | None = None, tls: Path | None = None) -> None:
        self.fabric = fabric
        self.pcap_dir = pcap_dir
        self.trace_dir = trace_dir
        """Every embedded switch writes its timeline here when it stops (switch-<name>.json)."""
        self.target, self.program, self.program_files = target, program, program_files
        self.run_dir, self.seed, self.bw = run_dir, seed, bw
        self.fault_plan, self.ecn_threshold, self.queue_packets = fault_plan, ecn_threshold, queue_packets
        self.cpu_layout = CpuLayout.plan(cpus, switches=len(fabric.switches))
        self.tls = CertDir(tls.resolve()) if tls is not None else None
        """The switches' certificates (P4Runtime over TLS, client auth on); None: plaintext."""
        self.net: Mininet | None = None
        self.clients: dict[str, P4RuntimeClient] = {}
        self.ctls: dict[str, ProgramController] = {}
        self.loss: float | None = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Network:
        try:
            self._stack.enter_context(mininet_lock())
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start Mininet with a switch process per switch, prepare the hosts, program every switch."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        setLogLevel("warning")
        if self.tls is not None:
            self.tls.ensure()
        if self.pcap_dir is not None:
            self.pcap_dir.mkdir(parents=True, exist_ok=True)
        timeline = None
        if self.trace_dir is not None:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
            spec = next((p for p in PROTOCOLS.values() if p.in_network and p.program == self.program), None)
            timeline = (str(self.trace_dir), spec.trace_track if spec else None, spec.trace_fields if spec else ())
        switch_cls = partial(P4Switch, target=self.target, log_dir=str(self.run_dir), seed=self.seed,
                             fault_plan=str(self.fault_plan) if self.fault_plan else None, cpu_layout=self.cpu_layout,
                             pcap_dir=str(self.pcap_dir) if self.pcap_dir is not None else None, timeline=timeline,
                             tls=self.tls)
        # built by start(), not here: a Ctrl-C while Mininet builds then finds self.net set and tears it down
        self.net = net = Mininet(topo=self.fabric.topo(), switch=switch_cls, controller=None, autoSetMacs=False,
                                 link=TCLink if self.bw is not None else Link, build=False)
        net.start()
        prepare_hosts(net)
        if self.bw is not None:
            check_link_rates(net, self.bw)
            if self.queue_packets is not None:
                set_queue_limits(net, self.queue_packets)
        self.switches: dict[str, P4Switch] = {name: net.get(name) for name in self.fabric.switches}
        self.hosts = [net.get(f"h{i}") for i in range(1, self.fabric.workers + 1)]
        """Every job's worker hosts, job by job (job j's rank r on hosts[(j-1) * workers + r])."""
        self.ps_host = net.get(f"h{self.fabric.ps_host}") if self.fabric.ps_host is not None else None
        for name in self.switches:
            self.program_switch(name)

    @property
    def primary(self) -> str:
        """The primary switch's name: the star's, or the PS's in a two-tier network."""
        return self.fabric.switches[-1]

    @property
    def switch(self) -> P4Switch:
        return self.switches[self.primary]

    @property
    def client(self) -> P4RuntimeClient:
        return self.clients[self.primary]

    @property
    def ctl(self) -> ProgramController:
        return self.ctls[self.primary]

    def program_switch(self, name: str) -> None:
        """Connect to switch `name`, push the pipeline and its L2 entries (and ECN threshold); a controller this
        network already has for it is kept (it remembers the epochs it gave)."""
        sw = self.switches[name]
        json_path, p4info = self.program_files
        client = self.clients[name] = P4RuntimeClient(sw.grpc_address, device_id=sw.device_id,
                                                      tls=self.tls.client() if self.tls else None).connect()
        client.set_pipeline(p4info, json_path)
        registers = open_registers(client, bmv2=self.target is Target.BMV2, thrift_port=sw.thrift_port)
        ctl = self.ctls.get(name)
        if ctl is None:
            ctl = self.ctls[name] = controller_for(self.program)(client, registers)
        else:
            ctl.client, ctl.registers = client, registers
        ctl.install_forwarding(*self.fabric.forwarding(name))
        if self.ecn_threshold is not None:
            set_ecn = getattr(ctl, "set_ecn_threshold", None)
            if set_ecn is None:
                raise ValueError(f"ECN marking is ATP's; {self.program}.p4 has none")
            set_ecn(self.ecn_threshold)

    def install(self, jobs: Sequence[JobConfig]) -> None:
        """Every switch's role in each job."""
        for job in jobs:
            self.fabric.install_job(self.ctls, job)

    def set_loss(self, loss: float) -> None:
        """The drop simulator's probability on every host port (both directions) of every switch."""
        for name, ports in self.fabric.host_ports().items():
            for port in ports:
                self.ctls[name].set_drop_probability(port, ingress=loss, egress=loss)
        self.loss = loss

    def live(self) -> list[str]:
        """Names of the switches whose process runs and serves."""
        return [name for name, sw in self.switches.items() if sw.connected()]

    def reset(self, jobs: Sequence[JobConfig], loss: float) -> None:
        """Before a run: the jobs' switch state reset (fresh worker processes start at set 0 of every slot, or at
        sequence 1 with free aggregators) and the simulated loss set where it changed."""
        live = self.live()
        for name in live:
            for job in jobs:
                self.ctls[name].reset_job(job)
        if live and loss != self.loss:
            self.set_loss(loss)

    def restart_switch(self, jobs: Sequence[JobConfig]) -> None:
        """Kill the (star's) switch process and start it again, re-programmed as a controller would after a crash:
        pipeline, L2 entries, every job (SwitchML: with a new epoch), the simulated loss."""
        if len(self.switches) != 1:
            raise ValueError("restarting a switch mid-run is supported on the star")
        name, sw = self.primary, self.switch
        if sw.process is not None and sw.process.poll() is None:
            os.kill(sw.process.pid, signal.SIGKILL)
            sw.process.wait()
        self.clients[name].close()
        sw.start([])
        self.program_switch(name)
        self.install(jobs)
        if self.loss:
            self.set_loss(self.loss)

    def kill_switch(self) -> None:
        """SIGKILL the primary switch's process (a crash, not restarted)."""
        assert self.switch.process is not None
        os.kill(self.switch.process.pid, signal.SIGKILL)

    def counters(self, job_id: int) -> dict[str, dict[str, tuple[int, int]]]:
        """The job's counters on every switch that still runs."""
        return {name: self.ctls[name].counters(job_id) for name in self.live()}

    def missing_ranks(self, job: JobConfig) -> list[list[int]]:
        """Per running switch: the ranks absent from every partial aggregate it holds for the job."""
        return [self.ctls[name].missing_ranks(job) for name in self.live()]

    def link_stats(self) -> dict[str, tuple[int, int]]:
        """(packets, bytes) so far on each metered group of switch interfaces, both directions."""
        out = {}
        for name, intfs in self.fabric.metered_links().items():
            counts = [_statistics(intf, "rx_packets", "tx_packets", "rx_bytes", "tx_bytes") for intf in intfs]
            out[name] = (sum(c[0] + c[1] for c in counts), sum(c[2] + c[3] for c in counts))
        return out

    def port_counters(self, hosts: Sequence[int]) -> dict[int, PortCounters]:
        """Per host h<i>: the kernel's counters of its switch port so far (what the host sent is what the port
        received: the same measure for every protocol, Ethernet headers included)."""
        out = {}
        for h in hosts:
            a = self.fabric.attachment(h)
            rx_frames, rx_bytes, tx_bytes, rx_drops, tx_drops = _statistics(
                f"{a.switch}-eth{a.port}", "rx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped")
            out[h] = PortCounters(rx_frames, rx_bytes, tx_bytes, rx_drops + tx_drops)
        return out

    def switch_cpu_s(self) -> dict[str, float]:
        """CPU seconds each switch process has run so far, every thread (the scheduler's nanosecond count,
        /proc/PID/task/TID/schedstat: /proc's utime and stime tick at 10 ms, coarse for a run of 50 ms)."""
        return {name: t.cpu_s for name, t in self.switch_sched().items()}

    def switch_sched(self) -> dict[str, SchedTimes]:
        """Per switch process so far: CPU seconds and seconds runnable but waiting for a CPU (worker.schedstat)."""
        return {name: sched_times(sw.process.pid) if sw.process else SchedTimes()
                for name, sw in self.switches.items()}

    def quiesce(self, hosts: Sequence[int], timeout_s: float = 5.0) -> int:
        """Wait, at most timeout_s, until no host h<i> has a TCP connection still closing: a host baseline's
        connections end with FINs after its run, and under loss a FIN is resent up to seconds later, into the next
        run's frame counts. Returns the connections still closing at the end (0: quiet)."""
        deadline = time.monotonic() + timeout_s
        while True:
            closing = sum(st in _CLOSING for h in hosts for _, st in tcp_states(self.host(f"h{h}").pid))
            if not closing or time.monotonic() >= deadline:
                return closing
            time.sleep(0.02)

    def transport_counters(self, hosts: Sequence[int]) -> dict[int, TransportCounters]:
        """Per host h<i> so far: its namespace's TCP counters and the drops of the rate-limiting qdiscs at both
        ends of its link (the host's interface and its switch port)."""
        out = {}
        for h in hosts:
            host, a = self.host(f"h{h}"), self.fabric.attachment(h)
            snmp = _proc_counters(Path(f"/proc/{host.pid}/net/snmp"))
            ext = _proc_counters(Path(f"/proc/{host.pid}/net/netstat"))
            drops = 0 if self.bw is None else (  # unlimited veths queue nothing (noqueue)
                _qdisc_drops(f"{a.switch}-eth{a.port}") + _qdisc_drops(host.defaultIntf().name, host.pid))
            out[h] = TransportCounters(snmp.get("Tcp", {}).get("OutSegs", 0),
                                       snmp.get("Tcp", {}).get("RetransSegs", 0),
                                       ext.get("TcpExt", {}).get("TCPTimeouts", 0), drops)
        return out

    def host(self, name: str) -> Any:
        """The Mininet host called `name` ("h3")."""
        assert self.net is not None
        return self.net.get(name.strip())

    def close(self) -> None:
        try:
            for client in self.clients.values():
                client.close()
            self.clients = {}
            if self.net is not None:
                kill_namespace_processes(self.net.hosts)
                self.net.stop()
                self.net = None
        finally:
            self._stack.close()
