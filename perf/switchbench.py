"""Switches side by side (`make bench-switch`): the embedded switch, real BMv2 when installed, any `--compare CMD`.

    python -m perf.switchbench [--out results/bench/switch.md] [--compare 'CMD' ...] [--compare-version DIR|REV ...]
                               [--no-bmv2] [--reps 3] [--duration 2] [--programs basic_forward agg64 ... switchml]
                               [--compilers ours p4c] [--overload 3] [--size 262144] [--replay-size 65536]
                               [--no-warmup] [--quick]

Every program is compiled by our compiler and, where p4c-bm2-ss is on PATH, by p4c (--compilers). Every switch is
a command that takes simple_switch_grpc's flags (`python -m switch` always, `simple_switch_grpc` when on PATH, then
each --compare, then the embedded switch of each --compare-version: another checkout or a git revision,
perf.checkout). Each runs on the same veth/namespace setup with the same traffic; the same compiled JSON and P4Info
are installed over P4Runtime, then the same table entries. Repetitions are interleaved, which switch goes first
rotating (rep 1: A, B; rep 2: B, A; ...), a fresh switch process each time, after an unreported warm-up round. The
default run, with BMv2 and both compilers, takes about an hour on a 2-core machine.

- basic_forward, agg64 and the family (perf.family): the highest paced offered rate delivered with < 0.1 % loss
  (perf.ratesearch: ramp, then bisection), in frames/s, then the rate delivered when offered 3x that (--overload),
  with the switch's, the sender's and the receiver's CPU;
- switchml: a 4-worker SwitchML all-reduce (perf.switchml_job), aggregated elements/s;
- embedded only: the engine in-process and its PacketLoop (perf.engine), and the switch traffic of a simulated
  SwitchML and ATP job replayed in process (perf.jobreplay): what virtual time pays per packet.

Ratios are per repetition (A and B measured back to back), then the median. The report goes to --out (Markdown)
and a CSV next to it (perf.switchreport).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from controller.client import ControllerError, P4RuntimeClient
from perf import switchml_job
from perf.checkout import CheckoutError, Version, checkout
from perf.engine import EngineResult, bench_in_process, bench_loop
from perf.jobreplay import JOB_PROGRAMS, bench_job_replay
from perf.harness import PROGRAMS, Measurement, Settings, SwitchUnderTest
from perf.machine import load_average, machine_info, proc_cpu_seconds
from perf.ratesearch import Probe, SearchResult, find_max_rate
from perf.switchreport import Report, write_report
from perf.workloads import (PACKET_PROGRAMS, Compiled, PacketProgram, available_compilers, compile_program,
                            compiler_argv)
from perf.traffic import NsProcess
from topo.netns import EMBEDDED_SWITCH, Host, SwitchProcess, free_tcp_port, hosts

DEVICE_ID = 1


class HarnessError(RuntimeError):
    """A switch under test could not be started, programmed or measured; the message says which and why."""


def parse_command(text: str) -> tuple[str, ...]:
    """A --compare command: shell words; a leading `python`/`python3` is this interpreter (its packages)."""
    argv = shlex.split(text)
    if not argv:
        raise argparse.ArgumentTypeError("empty --compare command")
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return tuple(argv)


def version_switch(tree: Path) -> tuple[str, ...]:
    """The embedded switch of another version of the project (its directory) as a command."""
    return ("env", f"PYTHONPATH={tree}", sys.executable, "-m", "switch")


def switches_under_test(compare: Sequence[tuple[str, ...]], bmv2: bool = True,
                        versions: Sequence[tuple[str, Version]] = ()) -> list[SwitchUnderTest]:
    """The embedded switch first, simple_switch_grpc when on PATH (and `bmv2`), then each --compare command, then
    the embedded switch of each (--compare-version spec, its exported or given version); names are unique."""
    out = [SwitchUnderTest("embedded", EMBEDDED_SWITCH)]
    if bmv2 and shutil.which("simple_switch_grpc"):
        out.append(SwitchUnderTest("bmv2", ("simple_switch_grpc",)))
    names = {s.name for s in out}

    def unique(name: str) -> str:
        base, k = name, 2
        while name in names:
            name, k = f"{base} #{k}", k + 1
        names.add(name)
        return name

    for cmd in compare:
        out.append(SwitchUnderTest(unique(shlex.join(cmd).replace(sys.executable, "python")), cmd))
    for spec, v in versions:
        out.append(SwitchUnderTest(unique(f"switch at {spec}"), version_switch(v.path), (str(v.path), f"<{v.label}>")))
    return out


@contextlib.contextmanager
def running_switch(sut: SwitchUnderTest, host_list: Sequence[Host], compiled: Compiled, start_timeout: float,
                   rpc_timeout: float = 10.0) -> Iterator[tuple[SwitchProcess, P4RuntimeClient, int]]:
    """`sut` on the hosts' switch-side interfaces (host i on port i), the pipeline set over P4Runtime; yields the
    process, a connected primary client and the Thrift port it was given. HarnessError (bounded: `start_timeout`
    to serve, `rpc_timeout` per P4Runtime call) when it does not start or its P4Runtime server does not answer."""
    grpc_addr, thrift = f"127.0.0.1:{free_tcp_port()}", free_tcp_port()
    command, args = sut.argv(["--device-id", str(DEVICE_ID), "--thrift-port", str(thrift),
                              *[a for h in host_list for a in ("-i", f"{h.port}@{h.switch_if}")], "--no-p4"],
                             ["--grpc-server-addr", grpc_addr])
    try:
        proc = SwitchProcess(args, ready_timeout=start_timeout, command=command)
    except RuntimeError as err:
        raise HarnessError(f"switch {sut.name!r}: {err}") from None
    client = P4RuntimeClient(grpc_addr, device_id=DEVICE_ID, timeout=rpc_timeout)
    try:
        try:
            client.connect()
            client.set_pipeline(compiled.p4info, compiled.json)
        except ControllerError as err:
            raise HarnessError(f"switch {sut.name!r} (`{shlex.join(proc.args)}`): {err}\n"
                               f"its last output:\n{proc.output_tail()}") from None
        yield proc, client, thrift
    finally:
        client.close()
        proc.stop()


class PacketPath:
    """h1's paced sender and the results' receiver, kept running across every switch and probe of a program."""

    def __init__(self, prog: PacketProgram, h1: Host, h2: Host) -> None:
        frame_args = [a for f in prog.frames(h1, h2) for a in ("--frame", f.hex())]
        self.sender = NsProcess(h1, "send-server", *frame_args, wait_ready=True)
        self.receiver = NsProcess((h1, h2)[prog.reply_to], "recv-server", "--match", prog.match.hex(),
                                  "--offset", str(prog.match_offset), wait_ready=True)

    def probe(self, rate: float, seconds: float, switch_pid: int | None = None, quiet: float = 0.25,
              drain_limit: float = 5.0) -> Probe:
        """Offer `rate` frames/s for `seconds`, wait until results stop arriving (`quiet` s without one, at most
        `drain_limit` s), count them; the backlog is how long after the sender's end the last one came."""
        first = self.receiver.ask({})
        before = first["received"]
        cpu0, t0 = (proc_cpu_seconds(switch_pid) if switch_pid else 0.0), time.monotonic()
        sent = self.sender.ask({"rate": rate, "duration": seconds}, timeout=seconds + 30)
        cpu1, t1 = (proc_cpu_seconds(switch_pid) if switch_pid else 0.0), time.monotonic()
        end = time.monotonic() + drain_limit
        while True:
            now = self.receiver.ask({})
            age = now["last_rx_age"]
            if age is None or age >= quiet or time.monotonic() > end:
                break
            time.sleep(quiet - age)
        t2 = time.monotonic()
        received = now["received"] - before
        backlog = max(0.0, now["last_rx"] - sent["end"]) if received and now["last_rx"] is not None else 0.0
        rx_cpu = now.get("cpu_s", 0.0) - first.get("cpu_s", 0.0)
        return Probe(rate, sent["sent"] + sent["send_errors"], received, sent["seconds"],
                     (cpu1 - cpu0) / (t1 - t0) if switch_pid and t1 > t0 else None, backlog,
                     sent.get("cpu_s", 0.0) / sent["seconds"] if sent["seconds"] > 0 else None,
                     rx_cpu / (t2 - t0) if t2 > t0 else None)

    def close(self) -> None:
        self.sender.close()
        self.receiver.close()


def search_once(prog: PacketProgram, path: PacketPath, sut: SwitchUnderTest, compiled: Compiled,
                h1: Host, h2: Host, s: Settings, duration: float,
                log: Callable[[str], None]) -> tuple[SearchResult, Probe | None]:
    """Start `sut`, install the program, warm up at 2 kpps, search its highest loss-free rate, then (with
    `s.overload`) offer that multiple of it once; stop it. The search and the overload probe."""
    with running_switch(sut, (h1, h2), compiled, s.start_timeout) as (proc, client, _):
        try:
            prog.p4rt_setup(client, h1, h2)
        except ControllerError as err:
            raise HarnessError(f"switch {sut.name!r}: {prog.key}'s table entries: {err}") from None
        warm = path.probe(2000.0, min(0.5, duration), proc.proc.pid)
        if warm.received == 0:
            raise HarnessError(f"switch {sut.name!r} delivered none of the {warm.offered} {prog.key} frames of the "
                               f"warm-up (ports or pipeline not working?); its last output:\n{proc.output_tail()}")

        def probe(rate: float) -> Probe:
            p = path.probe(rate, duration, proc.proc.pid)
            log(f"    {rate / 1000:8.1f} kpps offered: {p.delivered_pps / 1000:8.1f} delivered, loss "
                f"{100 * p.loss:6.3f} %, backlog {1000 * p.backlog_s:5.0f} ms, CPU switch/sender/receiver "
                f"{_cpu(p.switch_cpu)}/{_cpu(p.sender_cpu)}/{_cpu(p.receiver_cpu)}"
                + ("" if p.passes() else "  (fails)"))
            return p

        result = find_max_rate(probe, start=s.start_rate, tolerance=s.tolerance, max_probes=s.max_probes)
        over = None
        if s.overload > 0 and result.best is not None and not result.sender_limited:
            log(f"  overload, {s.overload:g} × the loss-free rate:")
            over = probe(s.overload * result.best.delivered_pps)
        if proc.proc.poll() is not None:
            raise HarnessError(f"switch {sut.name!r} exited (code {proc.proc.returncode}) during the {prog.key} "
                               f"search; its last output:\n{proc.output_tail()}")
    return result, over


def _cpu(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


def _rep_label(rep: int, s: Settings) -> str:
    return "warm-up round (not reported)" if rep == 0 else f"rep {rep}/{s.reps}"


def turn_order(suts: Sequence[SwitchUnderTest], rep: int) -> list[SwitchUnderTest]:
    """The switches in the order repetition `rep` runs them: rep 1 (and the warm-up, rep 0) in the given order, each
    later one starting one switch further, so that no switch always runs first (or right after a given one)."""
    k = (rep - 1) % len(suts) if rep > 0 and suts else 0
    return [*suts[k:], *suts[:k]]


def measure_packet_program(prog: PacketProgram, compiled: dict[str, Compiled], suts: Sequence[SwitchUnderTest],
                           s: Settings, log: Callable[[str], None]) -> list[Measurement]:
    """For each compiler's JSON, interleaved repetitions of the rate search on every switch, over one pair of
    namespaces; first an unreported warm-up round with shorter probes (`s.warmup`)."""
    out: list[Measurement] = []
    with hosts(2) as (h1, h2):
        path = PacketPath(prog, h1, h2)
        try:
            for comp, c in compiled.items():
                for rep in range(0 if s.warmup else 1, s.reps + 1):
                    for sut in turn_order(suts, rep):
                        log(f"{prog.key} [{comp}] {_rep_label(rep, s)}, {sut.name}:")
                        duration = s.duration if rep else max(0.25, s.duration / 4)
                        result, over = search_once(prog, path, sut, c, h1, h2, s, duration, log)
                        if rep:
                            out.append(_search_measurement(prog, sut, rep, result, comp))
                            if over is not None:
                                out.append(_overload_measurement(prog, sut, rep, over, comp, s.overload))
                        log(f"  → {result.delivered_pps / 1000:.1f} kpps"
                            + (f", {over.delivered_pps / 1000:.1f} kpps under overload" if over else ""))
        finally:
            path.close()
    return out


def _search_measurement(prog: PacketProgram, sut: SwitchUnderTest, rep: int, r: SearchResult,
                        compiler: str = "ours") -> Measurement:
    b = r.best
    if b is None:
        return Measurement(prog.key, sut.name, rep, None, "frames/s", probes=len(r.probes), compiler=compiler,
                           note=f"no probe passed (lowest tried {min(p.rate for p in r.probes) / 1000:.1f} kpps)")
    failed = [p.rate for p in r.probes if not p.passes()]
    note = f"lowest failing offer {min(failed) / 1000:.1f} kpps" if failed else "no probe failed"
    if r.sender_limited:
        note = "the sender could not offer more: a lower bound"
    return Measurement(prog.key, sut.name, rep, b.delivered_pps, "frames/s", b.offered_pps, b.loss, b.switch_cpu,
                       len(r.probes), r.sender_limited, note, compiler, "loss-free", b.sender_cpu, b.receiver_cpu)


def _overload_measurement(prog: PacketProgram, sut: SwitchUnderTest, rep: int, p: Probe, compiler: str,
                          factor: float) -> Measurement:
    """The delivered rate when offered `factor` × the loss-free rate (what a saturated emulation gets)."""
    note = f"offered {p.offered_pps / 1000:.1f} kpps ({factor:g} × loss-free)"
    if p.sender_limited:
        note += f"; the sender reached only {p.offered_pps / p.rate:.0%} of its target"
    return Measurement(prog.key, sut.name, rep, p.delivered_pps if p.received else None, "frames/s", p.offered_pps,
                       p.loss, p.switch_cpu, 1, p.sender_limited, note, compiler, "overload", p.sender_cpu,
                       p.receiver_cpu)


def job_once(sut: SwitchUnderTest, hs: list[Host], setup: switchml_job.JobSetup, compiled: Compiled, size: int,
             s: Settings, work_dir: Path) -> tuple[switchml_job.JobRun, float | None]:
    """Start `sut`, install the job, run it once, stop it: the run and the switch's CPU seconds per all-reduce
    second."""
    with running_switch(sut, hs, compiled, s.start_timeout) as (proc, client, thrift):
        try:
            switchml_job.install_job(client, thrift, setup)
        except ControllerError as err:
            raise HarnessError(f"switch {sut.name!r}: installing the SwitchML job: {err}") from None
        cpu0 = proc_cpu_seconds(proc.proc.pid)
        run = switchml_job.run_job(hs, setup, compiled.json, work_dir, size, timeout=s.job_timeout)
        cpu = (proc_cpu_seconds(proc.proc.pid) - cpu0) / run.elapsed_s if run.elapsed_s > 0 else None
        if proc.proc.poll() is not None:
            raise HarnessError(f"switch {sut.name!r} exited (code {proc.proc.returncode}) during the SwitchML job; "
                               f"its last output:\n{proc.output_tail()}")
    return run, cpu


def measure_switchml(compiled: dict[str, Compiled], suts: Sequence[SwitchUnderTest], s: Settings, work_dir: Path,
                     log: Callable[[str], None]) -> list[Measurement]:
    """For each compiler's JSON, interleaved repetitions of one verified 4-worker all-reduce on every switch (after
    an unreported warm-up round with a quarter of the elements)."""
    out: list[Measurement] = []
    with hosts(4, address=switchml_job.star_address) as hs:
        for comp, c in compiled.items():
            setup = switchml_job.prepare_job(hs, c.json, work_dir / comp)
            for rep in range(0 if s.warmup else 1, s.reps + 1):
                for sut in turn_order(suts, rep):
                    run, cpu = job_once(sut, hs, setup, c, s.size if rep else max(1024, s.size // 4), s,
                                        work_dir / comp)
                    note = (f"{run.size} float32 elements, {len(hs)} workers, slowest {run.elapsed_s:.3f} s, "
                            f"{run.retransmissions} retransmissions") if run.elements_per_s else f"failed: {run.error}"
                    if rep:
                        out.append(Measurement(switchml_job.WORKLOAD, sut.name, rep, run.elements_per_s,
                                               "elements/s", switch_cpu=cpu, note=note, compiler=comp, mode="job"))
                    log(f"switchml [{comp}] {_rep_label(rep, s)}, {sut.name}: "
                        + (f"{run.elements_per_s:,.0f} elements/s" if run.elements_per_s else note))
    return out


def run(s: Settings, suts: Sequence[SwitchUnderTest], out: Path, work_dir: Path, log: Callable[[str], None],
        command: str = "python -m perf.switchbench") -> int:
    """Compile, measure, write the report; 0 when every measurement produced a figure."""

    info = machine_info()
    t_start = time.monotonic()
    wanted = [p for p in PROGRAMS if p in s.programs]
    compilers = available_compilers(s.compilers)
    if not compilers:
        raise HarnessError(f"none of the compilers {', '.join(s.compilers)} is available (p4c-bm2-ss not on PATH)")
    compiled: dict[str, dict[str, Compiled]] = {}
    for key in wanted:
        compiled[key] = {}
        for comp in compilers:
            out_dir = work_dir / comp
            if key in PACKET_PROGRAMS:
                src = PACKET_PROGRAMS[key].source_in(work_dir / "generated")
                compiled[key][comp] = compile_program(src, out_dir, command=compiler_argv(comp))
            else:  # the all-reduce job's program
                compiled[key][comp] = compile_program(switchml_job.SOURCE, out_dir, include=switchml_job.SOURCE.parent,
                                                      command=compiler_argv(comp))
    engine: list[EngineResult] = []
    if s.engine_seconds > 0:
        for key in wanted:
            if key not in PACKET_PROGRAMS:
                continue
            for comp, c in compiled[key].items():
                log(f"{key} [{comp}]: in-process engine ...")
                engine.append(bench_in_process(PACKET_PROGRAMS[key], c.json, s.engine_seconds, compiler=comp))
                if key in ("basic_forward", "agg64"):
                    engine.append(bench_loop(PACKET_PROGRAMS[key], c.json, s.engine_seconds, compiler=comp))
        if s.replay_size > 0:
            for key in JOB_PROGRAMS:
                for comp in compilers:
                    log(f"{key} [{comp}]: replaying a job's switch traffic in process ...")
                    engine.append(bench_job_replay(key, comp, size=s.replay_size, work_dir=work_dir / comp))
    rows: list[Measurement] = []
    for key in wanted:
        if key in PACKET_PROGRAMS:
            rows += measure_packet_program(PACKET_PROGRAMS[key], compiled[key], suts, s, log)
        else:
            rows += measure_switchml(compiled[key], suts, s, work_dir / key, log)
    info["load average at end"] = load_average()
    info["run time"] = f"{time.monotonic() - t_start:.0f} s"
    info["note"] = ("the machine is shared; a load average above the CPU count means other processes took CPU time "
                    "from these measurements")
    report = Report(info, s, list(suts), rows, engine, ", ".join(
        f"{c}: `{' '.join(compiler_argv(c)).replace(sys.executable, 'python')}`" for c in compilers), command)
    write_report(report, out)
    log(f"wrote {out} and {out.with_suffix('.csv')}")
    return 0 if all(m.value for m in rows) else 1


def settings_from(args: argparse.Namespace) -> Settings:
    """--quick first, then explicit flags on top."""
    s = Settings(reps=1, duration=0.5, size=16384, engine_seconds=0.2, max_probes=10, replay_size=0) \
        if args.quick else Settings()
    for name in ("reps", "duration", "size", "engine_seconds", "max_probes", "start_timeout", "overload",
                 "replay_size"):
        value = getattr(args, name)
        if value is not None:
            setattr(s, name, value)
    if args.programs:
        s.programs = tuple(args.programs)
    if args.compilers:
        s.compilers = tuple(args.compilers)
    s.warmup = not args.no_warmup
    return s


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m perf.switchbench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("results/bench/switch.md"),
                   help="Markdown report; the CSV goes next to it (default %(default)s)")
    p.add_argument("--compare", action="append", type=parse_command, default=[], metavar="CMD",
                   help="another switch: a command taking simple_switch_grpc's flags (repeatable; a leading "
                        "`python` is this interpreter; words after a `--` are target options, placed after the "
                        "harness's `-- --grpc-server-addr ...`)")
    p.add_argument("--compare-version", action="append", default=[], metavar="DIR|REV",
                   help="another version of this project's switch (repeatable): `python -m switch` from a checkout "
                        "directory or a git revision (exported for the run, perf.checkout)")
    p.add_argument("--no-bmv2", action="store_true", help="leave simple_switch_grpc out even when it is on PATH")
    p.add_argument("--programs", nargs="+", choices=PROGRAMS, help="default: all")
    p.add_argument("--compilers", nargs="+", choices=("ours", "p4c"),
                   help="who writes the JSON (default: both; p4c only where p4c-bm2-ss is on PATH)")
    p.add_argument("--overload", type=float,
                   help="after each search, offer this multiple of the loss-free rate once (default 3; 0: no)")
    p.add_argument("--reps", type=int, help="interleaved repetitions per program (default 3)")
    p.add_argument("--duration", type=float, help="seconds per rate probe (default 2)")
    p.add_argument("--size", type=int, help="SwitchML job: elements per worker (default 262144)")
    p.add_argument("--engine-seconds", type=float, help="in-process rows: seconds per mode, 0 to skip (default 3)")
    p.add_argument("--replay-size", type=int,
                   help="in-process rows of switchml.p4 and atp.p4: int32 elements per rank of the 4-worker job "
                        "whose switch traffic is replayed (perf.jobreplay; default 65536, 0 to skip)")
    p.add_argument("--max-probes", type=int, help="probes per rate search (default 12)")
    p.add_argument("--start-timeout", type=float, help="seconds a switch may take to serve P4Runtime (default 30)")
    p.add_argument("--no-warmup", action="store_true", help="no unreported warm-up round before rep 1")
    p.add_argument("--quick", action="store_true",
                   help="a short run (tests): 1 repetition, 0.5 s probes, a 16 Ki-element job, 0.2 s in-process")
    p.add_argument("--work-dir", type=Path, help="compiled programs and job files (default: a temporary directory)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv_used = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv_used)
    s = settings_from(args)
    if os.geteuid() != 0:
        print("error: the harness needs root (network namespaces, veth pairs): run `sudo make bench-switch`",
              file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    with contextlib.ExitStack() as stack:
        try:
            versions = [stack.enter_context(checkout(spec)) for spec in args.compare_version]
        except CheckoutError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        suts = switches_under_test(args.compare, not args.no_bmv2, list(zip(args.compare_version, versions)))
        log("switches: " + ", ".join(f"{x.name} (`{x.shown}`)" for x in suts))
        work = args.work_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="switchbench-")))
        try:
            return run(s, suts, args.out, work, log, shlex.join(["python", "-m", "perf.switchbench", *argv_used]))
        except (HarnessError, RuntimeError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
