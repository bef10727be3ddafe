"""The session that owns a network: `ExperimentNetwork` starts a Mininet network (topo.network) for a config's
`network`, installs its jobs, and runs the workload on it any number of times (the workers' processes, the
parameter servers, fault injection, the measurements); `run_experiment` is one run on a network of its own.

Experiments in other processes of this machine wait for each other (topo.network.MININET_LOCK).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from controller.base import ProgramController
from experiments.bound import Bound
from experiments.config import ROOT, ExperimentConfig, num_elems
from experiments.load import MachineClock
from experiments.result import ExperimentResult
from switch.timeline import merge
from topo.cpus import CpuLayout
from topo.network import Network
from topo.p4switch import P4Switch
from worker.job import JobConfig, PoolRange
from worker.launch import WorkerOutcome, collect, worker_argv
from worker.protocols import PROTOCOLS
from worker.schedstat import SchedTimes

__all__ = ["ExperimentNetwork", "layout_worker_args", "merge_trace", "run_experiment", "trace_dir"]


def _worker_argv(cfg: ExperimentConfig, job_path: Path, rank: int, barrier: Path | None,
                 layout: CpuLayout, job_index: int = 0) -> list[str]:
    late = rank == cfg.workers - 1 and (cfg.straggler_jobs is None or job_index < cfg.straggler_jobs)
    delay = cfg.straggler_ms if late and cfg.straggler_ms else 0.0
    trace = ["--trace", str(trace_dir(cfg) / f"{job_path.stem}-rank{rank}.json")] if cfg.trace else []
    return worker_argv(job_path, rank, cfg.protocol, cfg.size, dtype=cfg.dtype, seed=cfg.seed, window=cfg.window,
                       program_json=cfg.program_files[0], barrier=barrier, barrier_timeout=min(cfg.timeout_s, 60.0),
                       delay_ms=delay, sparsity=cfg.sparsity, sparse_overlap=cfg.sparse_overlap,
                       extra=[*layout_worker_args(layout), *(["--adaptive-window"] if cfg.window_control == "adaptive"
                                                             else []), *trace, *cfg.worker_args])


def layout_worker_args(layout: CpuLayout) -> list[str]:
    """Worker options that follow from the CPU layout (the experiment's own `worker_args` come after and win).

    Receive coalescing (`WindowOptions.rx_coalesce`) spares a switch that shares the workers' CPUs their wake-ups.
    With a CPU of its own (`split`) there is nothing to spare and the wait only holds results back (measured with
    SwitchML and ATP: README, Benchmarks, "Receive coalescing")."""
    return ["--rx-coalesce", "0"] if layout.split else []


def trace_dir(cfg: ExperimentConfig) -> Path:
    """Where the processes of a traced run write their timelines."""
    return cfg.run_dir / "trace"


def merge_trace(cfg: ExperimentConfig) -> dict[str, Any]:
    """The timelines of a traced run, merged into cfg.trace (switches first, then the PS, then the workers)."""
    assert cfg.trace is not None
    d = trace_dir(cfg)
    files = sorted(d.glob("switch-*.json")) + sorted(d.glob("ps*.json")) + sorted(
        d.glob("job*-rank*.json"), key=lambda p: (p.name.split("-rank")[0], int(p.stem.split("-rank")[1])))
    cfg.trace.parent.mkdir(parents=True, exist_ok=True)
    return merge(files, cfg.trace)


def run_experiment(cfg: ExperimentConfig) -> ExperimentResult:
    """Run one experiment in Mininet and return its outcome (the network is always torn down).

    Experiments in other processes of this machine wait for each other (MININET_LOCK).
    """
    if cfg.trace:
        shutil.rmtree(trace_dir(cfg), ignore_errors=True)
    try:
        with ExperimentNetwork(cfg) as net:
            return net.run(cfg)
    finally:
        if cfg.trace:  # the switches write theirs when they stop: after the network is down
            merge_trace(cfg)


class ExperimentNetwork:
    """A running network (topo.network.Network) with the jobs installed, and the workload on it, for any number
    of runs: the jobs' files, the worker processes, the parameter server, fault injection and the results.

    The network's shape comes from the config it is opened with (workers, link rate, target, program, pool);
    each `run(cfg)` may change what a run is (algorithm, size, dtype, loss, sparsity and its overlap, seed,
    straggler, window) and resets the job's switch state first. Holds MININET_LOCK while open.
    """

    def __init__(self, cfg: ExperimentConfig) -> None:
        cfg.check()
        self.cfg = cfg
        self.network: Network | None = None

    def __enter__(self) -> ExperimentNetwork:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        cfg = self.cfg
        cfg.run_dir.mkdir(parents=True, exist_ok=True)
        self.fabric = fabric = cfg.fabric()
        n_elems = num_elems(cfg.program_files[0])
        self.jobs = []
        self.job_paths = []
        for j in range(cfg.jobs):
            pool = PoolRange(base=0 if fabric.ps else j * cfg.pool_size, size=cfg.pool_size)
            job = fabric.job_config(j + 1, list(range(j * cfg.workers + 1, (j + 1) * cfg.workers + 1)),
                                    num_elems=n_elems, pool=pool, ps_host=fabric.ps_host_of(j))
            if cfg.job_priority is not None:
                job = replace(job, priority=cfg.job_priority)
            if cfg.job_release_us is not None:
                job = replace(job, release_us=cfg.job_release_us)
            path = cfg.run_dir / ("job.json" if cfg.jobs == 1 else f"job{j + 1}.json")
            job.save(path)
            self.jobs.append(job)
            self.job_paths.append(path)
        self.job, self.job_path = self.jobs[0], self.job_paths[0]
        self._plan_restart: float | None = None
        self.fault_plan = self._compile_faults() if cfg.fault_plan is not None else None
        self.network = Network(fabric, target=cfg.target, program=cfg.program, program_files=cfg.program_files,
                               run_dir=cfg.run_dir, cpus=cfg.cpus, seed=cfg.seed, bw=cfg.bw,
                               fault_plan=self.fault_plan, ecn_threshold=cfg.ecn_threshold,
                               queue_packets=cfg.queue_packets,
                               pcap_dir=cfg.run_dir / "pcap" if cfg.pcap else None,
                               trace_dir=trace_dir(cfg) if cfg.trace else None, tls=cfg.tls).__enter__()
        self.network.install(self.jobs)

    # the network's parts, for the studies and tests that look inside
    @property
    def net(self) -> Any:
        return self._network.net

    @property
    def switches(self) -> dict[str, P4Switch]:
        return self._network.switches

    @property
    def switch(self) -> P4Switch:
        """The primary switch: the star's, or the PS's in a two-tier network."""
        return self._network.switch

    @property
    def hosts(self) -> list[Any]:
        """Every job's worker hosts, job by job (job j's rank r on hosts[(j-1) * workers + r])."""
        return self._network.hosts

    @property
    def ps_host(self) -> Any:
        return self._network.ps_host

    @property
    def ctls(self) -> dict[str, ProgramController]:
        return self._network.ctls

    @property
    def cpu_layout(self) -> CpuLayout:
        return self._network.cpu_layout

    @property
    def _network(self) -> Network:
        if self.network is None:
            raise RuntimeError("the experiment's network is not running")
        return self.network

    def restart_switch(self) -> None:
        """Kill the (star's) switch process and start it again, re-programmed as a controller would after a crash:
        pipeline, L2 entries, every job (SwitchML: with a new epoch), the simulated loss."""
        if self.cfg.topo != "star":
            raise ValueError("restarting a switch mid-run is supported on the star")
        self._network.restart_switch(self.jobs)

    def _compile_faults(self) -> Path:
        """The switch's byte-level plan (switch.faults) of cfg.fault_plan for job 1, next to the job file."""
        compiled, self._plan_restart = self.cfg.compiled_fault_plan(self.fabric)
        out = self.cfg.run_dir / "faults.json"
        out.write_text(json.dumps(compiled, indent=1))
        return out

    def run(self, cfg: ExperimentConfig, background: Sequence[str] = ()) -> ExperimentResult:
        """One all-reduce by every worker; cfg's network fields must match the network's.

        `background`: items `"hI: command"`, each run on host hI for the duration of the run (e.g. a competing
        iperf3 flow) and killed afterwards.
        """
        return self.run_jobs(cfg, background)[0]

    def run_jobs(self, cfg: ExperimentConfig, background: Sequence[str] = ()) -> list[ExperimentResult]:
        """One all-reduce by every worker of every job, all jobs at once; one result per job."""
        changed = self.cfg.network.changes(cfg.network)
        if changed:
            raise ValueError("a run cannot change the network: " + ", ".join(changed))
        if cfg.protocol != self.cfg.protocol:
            cfg.check_protocol(self.fabric)
        network = self._network
        self.reset(cfg.loss)
        before = [network.counters(j.job_id) for j in self.jobs]
        links_before = network.link_stats()
        w = cfg.workers
        job_hosts = [range(k * w + 1, (k + 1) * w + 1) for k in range(len(self.jobs))]
        ps_hosts = self.fabric.ps_host_list  # each job's traffic crosses its PS's link
        metered = [h for hosts in job_hosts for h in hosts] + ps_hosts
        network.quiesce(metered)  # a previous host baseline's closing handshakes are not this run's frames
        ports_before, sched_before = network.port_counters(metered), network.switch_sched()
        transport_before, clock_before = network.transport_counters(metered), MachineClock.now()
        barriers = [self.fresh_barrier(f"barrier{j.job_id}") if cfg.barrier else None for j in self.jobs]

        def argv(i: int) -> list[str]:
            return _worker_argv(cfg, self.job_paths[i // w], i % w, barriers[i // w], network.cpu_layout, i // w)

        with self.parameter_server(self.job_paths) as ps_stats:
            outcomes = self.launch(argv, cfg.timeout_s, background=background,
                                   kill_switch_after_s=cfg.kill_switch_after_s, kill_rank_after=cfg.kill_rank_after,
                                   restart_switch_after_s=cfg.restart_switch_after_s or self._plan_restart,
                                   barrier=barriers[0])
        links = {name: (p - links_before[name][0], b - links_before[name][1])
                 for name, (p, b) in network.link_stats().items()}
        ports = {h: c - ports_before[h] for h, c in network.port_counters(metered).items()}
        sched = {sw: t - sched_before.get(sw, SchedTimes()) for sw, t in network.switch_sched().items()}
        outside = MachineClock.now().outside(clock_before, sum(t.cpu_s for t in sched.values()))
        transport = {h: c - transport_before[h] for h, c in network.transport_counters(metered).items()}
        switch_cpu = max((t.cpu_s for t in sched.values()), default=0.0)
        switch_wait = max((t.wait_s for t in sched.values()), default=0.0)
        run_s = max((float(o.report.get("elapsed_s", 0.0)) for o in outcomes), default=0.0)
        host_cpus = network.cpu_layout.host_cpus
        # the hosts' processes: the workers and, for ATP, the parameter servers (in serving, start-up left out)
        workers_cpu = sum(float(o.report.get("cpu_s", 0.0)) for o in outcomes) + float(ps_stats.get("cpu_s", 0.0))
        host_procs = len(outcomes) + len(self.fabric.ps_host_list if network.ps_host is not None else ())
        hosts_wait = sum(float(o.report.get("wait_s", 0.0)) for o in outcomes) + float(ps_stats.get("wait_s", 0.0))
        in_network = PROTOCOLS[cfg.protocol].in_network
        tensor_bytes = cfg.size * np.dtype(cfg.dtype).itemsize
        results = []
        for k, job in enumerate(self.jobs):
            per_switch = {sw: {n: (v[0] - before[k][sw].get(n, (0, 0))[0], v[1] - before[k][sw].get(n, (0, 0))[1])
                               for n, v in after.items()}
                          for sw, after in network.counters(job.job_id).items()}
            total: dict[str, tuple[int, int]] = {}
            for counters in per_switch.values():
                for n, (p, b) in counters.items():
                    tp, tb = total.get(n, (0, 0))
                    total[n] = (tp + p, tb + b)
            mine = outcomes[k * w:(k + 1) * w]
            for o in mine:
                o.rank %= w
            ps = ps_stats.get("jobs", {}).get(str(job.job_id)) if network.ps_host is not None else None
            missing: list[int] = []
            if not all(o.ok for o in mine):
                missing = self._missing_ranks(job, ps)
            sent = [ports[h] for h in job_hosts[k]]
            wire = (sum(c.rx_frames for c in sent), sum(c.rx_bytes for c in sent))
            elapsed = max((float(o.report.get("elapsed_s", 0.0)) for o in mine), default=0.0)
            bound = None
            if elapsed > 0:
                mine_ps = self.fabric.ps_host_of(k)
                links_of_job = sent + ([ports[mine_ps]] if mine_ps is not None else [])
                busiest = max(max(c.rx_bytes, c.tx_bytes) for c in links_of_job)
                hosts_of_job = [*job_hosts[k], *([mine_ps] if mine_ps is not None else [])]
                tcp = [transport[h] for h in hosts_of_job]
                if in_network:
                    sent_packets = sum(int(o.report.get("packets_sent", 0)) for o in mine)
                    resent = sum(int(o.report.get("retransmissions", 0)) for o in mine)
                else:
                    sent_packets, resent = sum(c.tcp_out_segs for c in tcp), sum(c.tcp_retrans_segs for c in tcp)
                bound = Bound(link_busy=None if cfg.bw is None else busiest * 8 / (cfg.bw * 1e6 * elapsed),
                              switch_busy=switch_cpu / run_s, host_busy=workers_cpu / (run_s * host_cpus),
                              veth_drops=sum(c.drops for c in links_of_job),
                              switch_wait=switch_wait / run_s, host_wait=hosts_wait / (run_s * max(1, host_procs)),
                              outside=outside, retransmitted=resent / sent_packets if sent_packets else 0.0,
                              queue_drops=sum(c.queue_drops for c in tcp),
                              tcp_timeouts=sum(c.tcp_timeouts for c in tcp),
                              efficiency=tensor_bytes / busiest if busiest else None)
            results.append(ExperimentResult(cfg, mine, total, network.switch.log_path, ps, links, per_switch,
                                            missing, network.cpu_layout, wire, bound))
        return results

    def _missing_ranks(self, job: JobConfig, ps: dict[str, Any] | None) -> list[int]:
        """Ranks absent from every partial aggregate of the job on the running switches and at the PS."""
        found: set[int] | None = None
        sources = self._network.missing_ranks(job)
        sources.append(list(ps.get("missing_ranks", [])) if ps else [])
        for ranks in sources:
            if ranks:
                found = set(ranks) if found is None else found & set(ranks)
        return sorted(found or [])

    @contextlib.contextmanager
    def parameter_server(self, job_files: Sequence[Path] = ()) -> Iterator[dict[str, Any]]:
        """A protocol with a PS: its process on each PS host (serving the jobs whose PS it is) while the block runs;
        the dict yielded is filled with their statistics when they stop (empty without a PS host)."""
        stats: dict[str, Any] = {}
        if self.ps_host is None:
            yield stats
            return
        files = list(job_files or self.job_paths)
        by_host: dict[int, list[Path]] = {}
        for k, f in enumerate(files):
            by_host.setdefault(self.fabric.ps_host_of(k) or 0, []).append(f)
        procs: list[tuple[subprocess.Popen, Path]] = []
        try:
            for host, mine in by_host.items():
                out = self.cfg.run_dir / f"ps-stats-h{host}.json"
                out.unlink(missing_ok=True)
                jobs = [a for f in mine for a in ("--job", str(f))]
                trace = trace_dir(self.cfg) / ("ps.json" if len(by_host) == 1 else f"ps-h{host}.json")
                proc = self._network.net.get(f"h{host}").popen(self.cpu_layout.host_argv(
                    [sys.executable, "-m", str(PROTOCOLS[self.cfg.protocol].ps_module), *jobs,
                     "--program-json", str(self.cfg.program_files[0]), "--stats", str(out),
                     *(["--trace", str(trace)] if self.cfg.trace else [])]),
                    cwd=str(ROOT), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                procs.append((proc, out))
                assert proc.stdout is not None
                ready = proc.stdout.readline()  # "atp_ps: serving ..." once bound (or nothing if it failed)
                if "serving" not in ready:
                    proc.wait(10)
                    raise RuntimeError(f"the parameter server did not start: {ready.strip()} "
                                       f"{proc.stderr.read().strip() if proc.stderr else ''}")
            yield stats
        finally:
            for proc, out in procs:
                proc.send_signal(signal.SIGTERM)
            for proc, out in procs:
                try:
                    proc.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.communicate()
                if out.exists():
                    got = json.loads(out.read_text())
                    jobs_stats = {**stats.get("jobs", {}), **got.get("jobs", {})}
                    cpu = float(stats.get("cpu_s", 0.0)) + float(got.get("cpu_s", 0.0))
                    wait = float(stats.get("wait_s", 0.0)) + float(got.get("wait_s", 0.0))
                    stats.update(got)
                    stats["jobs"], stats["cpu_s"], stats["wait_s"] = jobs_stats, cpu, wait

    def reset(self, loss: float) -> None:
        """Before a run: the jobs' switch state reset and the simulated loss set on every worker port (and the
        PS's)."""
        self._network.reset(self.jobs, loss)

    def fresh_barrier(self, name: str = "barrier") -> Path:
        """An empty start-barrier directory for the next run's processes."""
        barrier = self.cfg.run_dir / name
        shutil.rmtree(barrier, ignore_errors=True)
        barrier.mkdir()
        return barrier

    def launch(self, argv_of_rank: Callable[[int], list[str]], timeout_s: float, *, background: Sequence[str] = (),
               kill_switch_after_s: float | None = None,
               kill_rank_after: tuple[int, float] | None = None, restart_switch_after_s: float | None = None,
               barrier: Path | None = None) -> list[WorkerOutcome]:
        """Run argv_of_rank(r) on host h(r+1) for every rank, bounded by timeout_s; their outcomes by rank (the last
        stdout line that is JSON is a process's report). `background` as in run()."""
        network = self._network
        bg = []
        for spec in background:
            host, command = spec.split(":", 1)
            # sh -c ourselves: Mininet's shell=True reads $SHELL, which CI's environment does not set
            bg.append(network.host(host).popen(network.cpu_layout.host_argv(["sh", "-c", command]),
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            started = time.monotonic()
            procs = [h.popen(network.cpu_layout.host_argv(argv_of_rank(rank)), cwd=str(ROOT), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for rank, h in enumerate(network.hosts)]
            if kill_switch_after_s is not None:
                time.sleep(kill_switch_after_s)
                network.kill_switch()
            if kill_rank_after is not None or restart_switch_after_s is not None:
                while barrier is not None and time.monotonic() < started + timeout_s and \
                        len(list(barrier.glob("ready-*"))) < self.cfg.workers:
                    time.sleep(0.01)
            if kill_rank_after is not None:
                rank, after = kill_rank_after
                time.sleep(after)
                procs[rank].kill()
            if restart_switch_after_s is not None:
                time.sleep(restart_switch_after_s)
                self.restart_switch()
            deadline = started + timeout_s
            outcomes = [collect(rank, p, deadline, started) for rank, p in enumerate(procs)]
            if kill_rank_after is not None:
                outcomes[kill_rank_after[0]].stderr = "killed by the experiment (kill_rank_after)"
            return outcomes
        finally:
            for p in bg:  # mnexec -d makes each a session leader: kill its whole group (sh and what it started)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def close(self) -> None:
        if self.network is not None:
            self.network.close()
            self.network = None
