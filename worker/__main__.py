"""Command line of one worker: all-reduce a generated tensor through the switch (or a host baseline) and report.

    python -m worker --job job.json --rank R [--protocol switchml|atp|ring|ps] [--size N] [--seed S]
                     [--dtype float32|int32] [--sparsity F] [--sparse-overlap F] [--verify]
                     [--window W] [--timeout-ms T] [--min-timeout-ms T] [--max-timeout-ms T] [--backoff F]
                     [--max-retries K] [--fixed-timeout] [--fast-retransmit K] [--rx-coalesce F]
                     [--program-json out/switchml.json]
                     [--barrier DIR [--barrier-timeout S]] [--connect-timeout S] [--json]

`--protocol` picks the protocol from `worker.protocols.PROTOCOLS`: `switchml` (in-network aggregation, the default),
`ring` or `ps` (host-based baselines over TCP through the same switch; they use the job file's worker ip and
udp_port, the port number as a TCP port).

Exit codes: 0 ok, 1 verification failed, 2 switch or peer unreachable (no result after all retransmissions; a
baseline's peer that did not connect or stopped answering; or another worker failed or never reached the --barrier;
a worker failing before the barrier tells the others so),
3 bad configuration or arguments, 4 protocol error (the switch answered something impossible), 5 socket error.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import NoReturn, Sequence

from switch.timeline import Timeline
from worker.arguments import probability
from worker.barrier import BarrierError, BarrierTimeout, PeerFailed, file_barrier, mark_failed
from worker.codec import CodecError
from worker.collective import CollectiveOptions
from worker.driver import WindowOptions, timeouts
from worker.errors import InputError, ProtocolError, Unreachable
from worker.job import JobConfig, JobConfigError
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS, default_windows, open_collective
from worker.schedstat import sched_times
from worker.transport import TransportError
from worker.verify import rank_input, result_digest

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_UNREACHABLE = 2
EXIT_CONFIG = 3
EXIT_PROTOCOL = 4
EXIT_SOCKET = 5


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_CONFIG, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    d = WindowOptions()
    p = _Parser(
        prog="python -m worker",
        description="One worker of an in-network all-reduce job: all-reduces a generated tensor through the switch.",
        epilog="exit codes: 0 ok, 1 verification failed, 2 switch unreachable (no result after all retransmissions), "
        "3 bad configuration or arguments, 4 protocol error, 5 socket error",
    )
    p.add_argument("--job", required=True, help="job file (JSON, see worker/job.py)")
    p.add_argument("--rank", required=True, type=int, help="this worker's rank in the job")
    p.add_argument("--protocol", "--algo", dest="protocol", choices=sorted(PROTOCOLS), default=DEFAULT_PROTOCOL,
                   help="the all-reduce: " + "; ".join(f"{c.name}: {c.description}" for c in PROTOCOLS.values()))
    p.add_argument("--size", type=int, default=65536, help="elements to all-reduce (default 65536)")
    p.add_argument("--seed", type=int, default=0, help="input seed; rank r's input is seeded by (seed, r)")
    p.add_argument("--dtype", choices=("float32", "int32"), default="float32",
                   help="float32: block floating point as SwitchML; int32: exact (wrapping) integer sums")
    p.add_argument("--sparsity", type=probability(), default=0.0, metavar="F",
                   help="fraction of 64-element blocks that are all zero in each rank's input, drawn independently "
                        "per rank (default 0: dense)")
    p.add_argument("--sparse-overlap", type=probability(), default=0.0, metavar="F",
                   help="with --sparsity: probability that a block's zero/non-zero draw is one all ranks share instead "
                        "of the rank's own (default 0: independent per rank; 1: every rank has the same zero blocks)")
    p.add_argument("--verify", action="store_true",
                   help="compute every rank's input and check the result against the float64 reference and bound")
    p.add_argument("--window", type=int, default=None,
                   help="packets in flight, at most the job's pool size (default per protocol: "
                   + default_windows() + "; all workers of a job must use the same)")
    p.add_argument("--timeout-ms", type=float, default=None,
                   help=f"per-packet timeout before the first RTT sample (default {d.timeout * 1000:g}, RFC 6298's "
                   "initial RTO; the first measured RTT then re-arms the packets waiting on it; with --fixed-timeout: "
                   "always)")
    p.add_argument("--min-timeout-ms", type=float, default=None,
                   help="floor of the adaptive timeout's variance term: RTO = SRTT + max(this, 4 RTTVAR) (default "
                   f"{d.min_timeout * 1000:g}, or --max-timeout-ms if that is lower)")
    p.add_argument("--max-timeout-ms", type=float, default=d.max_timeout * 1000,
                   help=f"cap of the adaptive and backed-off timeout (default {d.max_timeout * 1000:g})")
    p.add_argument("--fixed-timeout", action="store_true",
                   help="no adaptive timeout (RFC 6298 SRTT + 4 RTTVAR): every packet starts with --timeout-ms")
    p.add_argument("--no-restart-on-progress", dest="restart_on_progress", action="store_false",
                   help="per-packet timers from each (re)transmission only, not restarted by fresh results "
                        "(RFC 6298 5.3 restarts them: the default)")
    p.add_argument("--adaptive-window", dest="adapt_window", action="store_true",
                   help="in-network protocols: keep at most rate x (min RTT + 5 ms) packets in flight (worker/cwnd.py) "
                        "instead of the whole window (the default, as SwitchML's published worker)")
    p.add_argument("--fast-retransmit", type=int, default=d.fast_retransmit, metavar="K",
                   help=f"retransmit a packet once K later-sent packets were answered (default {d.fast_retransmit}; "
                   "0: off)")
    p.add_argument("--rx-coalesce", type=float, default=d.rx_coalesce, metavar="F",
                   help=f"once a result is ready, wait F x the smoothed RTT (at most {d.max_rx_coalesce * 1000:g} ms) "
                   f"before reading, to take several results per wake-up (default {d.rx_coalesce:g}; 0: off)")
    p.add_argument("--backoff", type=float, default=d.backoff, help="timeout multiplier per retransmission")
    p.add_argument("--max-retries", type=int, default=d.max_retries,
                   help="retransmissions of one packet before giving up (exit 2)")
    p.add_argument("--program-json", help="compiled switch program (default: $INA_PROGRAM_JSON, out/switchml.json; "
                   "atp: $INA_ATP_JSON, out/atp.json)")
    p.add_argument("--bind", metavar="IP", help="local IP to bind instead of the job's worker IP")
    p.add_argument("--switch-port", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--barrier", metavar="DIR",
                   help="start barrier: once set up, wait until every rank of the job is ready (files in DIR, shared "
                   "by the workers; a fresh directory per run), so the timing excludes process start-up")
    p.add_argument("--barrier-timeout", type=float, default=60.0, metavar="S",
                   help="give up (exit 2) when the other workers are not ready after S seconds (default 60)")
    p.add_argument("--delay-ms", type=float, default=0.0, metavar="MS",
                   help="straggler: wait MS milliseconds after the start barrier before joining the all-reduce (the "
                   "extra compute time of a slow worker; this rank's elapsed time excludes it, the others' include "
                   "their wait for it)")
    p.add_argument("--connect-timeout", type=float, default=30.0, metavar="S",
                   help="host baselines: wait at most S seconds for the peers' TCP connections (default 30)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--trace", metavar="FILE",
                   help="write a timeline of the run to FILE (Chrome trace-event JSON; opens in Perfetto): the "
                        "all-reduce, and for switchml/atp a track per slot/aggregator with each packet, timeout and "
                        "retransmission; written also when the run fails")
    # each protocol's own options, once for protocols that share them (ESA takes ATP's)
    for add in dict.fromkeys(spec.add_arguments for spec in PROTOCOLS.values() if spec.add_arguments is not None):
        add(p)
    return p


def _peak_rss_kb() -> int:
    """This process's peak resident memory in KiB: VmHWM (of this program's image; ru_maxrss would also count the
    image before exec, e.g. the forked Mininet process that started us), else ru_maxrss."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _fail(code: int, message: str, as_json: bool, **extra: object) -> int:
    if as_json:
        print(json.dumps({"ok": False, "exit_code": code, "error": message, **extra}))
    print(f"worker: error: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    passed: list[bool] = []  # set once this worker got through its start barrier
    timeline = Timeline(f"worker {args.rank} ({args.protocol})", pid=args.rank + 1) if args.trace else None
    try:
        code = _main(args, passed, timeline)
    finally:
        if timeline is not None:
            try:
                timeline.write(args.trace)
            except OSError as exc:
                print(f"worker: cannot write --trace {args.trace}: {exc.strerror}", file=sys.stderr)
    if code != EXIT_OK and args.barrier and not passed:
        mark_failed(args.barrier, args.rank)  # the other workers stop waiting for this one
    return code


def _main(args: argparse.Namespace, passed: list[bool], timeline: Timeline | None = None) -> int:
    try:
        job = JobConfig.load(args.job)
        job.worker(args.rank)
        if args.size < 0:
            raise JobConfigError(f"--size must be >= 0, got {args.size}")
        if args.delay_ms < 0:
            raise JobConfigError(f"--delay-ms must be >= 0, got {args.delay_ms}")
        timeout, min_timeout, max_timeout = timeouts(args.timeout_ms, args.min_timeout_ms, args.max_timeout_ms)
        options = WindowOptions(window=args.window, timeout=timeout, backoff=args.backoff,
                                max_timeout=max_timeout, max_retries=args.max_retries, adaptive=not args.fixed_timeout,
                                min_timeout=min_timeout, fast_retransmit=args.fast_retransmit,
                                rx_coalesce=args.rx_coalesce, restart_on_progress=args.restart_on_progress,
                                adapt_window=args.adapt_window)
        spec = PROTOCOLS[args.protocol]
        copts = CollectiveOptions(window=options, program_json=args.program_json, bind_ip=args.bind,
                                  udp_port=args.switch_port, connect_timeout=args.connect_timeout,
                                  protocol=spec.options(args) if spec.options is not None else None,
                                  timeline=timeline)
    except (JobConfigError, ValueError) as exc:
        return _fail(EXIT_CONFIG, str(exc), args.json)
    data = rank_input(args.size, args.seed, args.rank, args.dtype, args.sparsity, overlap=args.sparse_overlap)
    try:
        with open_collective(args.protocol, job, args.rank, copts) as coll:
            barrier_wait = None
            if args.barrier:
                barrier_wait = file_barrier(args.barrier, args.rank, job.num_workers, args.barrier_timeout)
            passed.append(True)
            if args.delay_ms > 0:
                time.sleep(args.delay_ms / 1000)
            cpu0, sched0 = time.process_time(), sched_times()
            t0 = time.monotonic()
            try:
                run = coll.run(data, args.dtype)
            finally:
                if timeline is not None:
                    timeline.track(0, "all-reduce")
                    timeline.span(f"all-reduce {args.size} {args.dtype}", 0, t0, time.monotonic(), "run",
                                  elements=args.size)
            cpu_s, wait_s = time.process_time() - cpu0, (sched_times() - sched0).wait_s
            peak_rss_kb = _peak_rss_kb()  # before --verify's own arrays
            verdict = None
            if args.verify:
                inputs = [rank_input(args.size, args.seed, r, args.dtype, args.sparsity,
                                     overlap=args.sparse_overlap) for r in range(job.num_workers)]
                verdict = coll.verify(run, inputs, args.dtype)
    except (BarrierTimeout, PeerFailed) as exc:
        return _fail(EXIT_UNREACHABLE, str(exc), args.json)
    except BarrierError as exc:
        return _fail(EXIT_CONFIG, str(exc), args.json)
    except Unreachable as exc:
        return _fail(EXIT_UNREACHABLE, str(exc), args.json, **exc.details)
    except ProtocolError as exc:
        return _fail(EXIT_PROTOCOL, str(exc), args.json)
    except (CodecError, InputError) as exc:
        return _fail(EXIT_CONFIG, str(exc), args.json)
    except TransportError as exc:
        return _fail(EXIT_SOCKET, exc.strerror or str(exc), args.json)

    stats = run.stats.as_dict()
    ok = verdict is None or verdict.ok
    if args.json:
        out: dict[str, object] = {"ok": ok, "protocol": args.protocol, "rank": args.rank, "job_id": job.job_id,
                                  "workers": job.num_workers,
                                  "dtype": args.dtype, "size": args.size, **stats}
        out["cpu_s"] = round(cpu_s, 6)  # this process's CPU time during the all-reduce (vs elapsed_s: CPU share)
        out["wait_s"] = round(wait_s, 6)  # ... and its time runnable but waiting for a CPU (a busy machine)
        out["peak_rss_kb"] = peak_rss_kb  # the process's peak resident memory up to the end of the all-reduce
        out["digest"] = result_digest(run.array)  # bit-identical results on two engines have equal digests
        out["started_s"] = round(t0, 6)  # CLOCK_MONOTONIC: one clock for every Mininet host (the start skew)
        if barrier_wait is not None:
            out["barrier_wait_s"] = round(barrier_wait, 6)
        if verdict is not None:
            out.update(verified=verdict.ok, max_error=verdict.max_error,
                       max_error_over_bound=verdict.max_error_over_bound, verify_message=verdict.message)
        print(json.dumps(out))
    else:
        check = "" if verdict is None else f"; verify {'ok' if verdict.ok else 'FAILED'}: {verdict.message}"
        extra = ", ".join(f"{stats[k]} {k.replace('_', ' ')}" for k in ("retransmissions", "duplicates_ignored")
                          if k in stats)
        print(f"rank {args.rank} ({args.protocol}): all-reduced {args.size} {args.dtype} over {job.num_workers} workers in "
              f"{stats['elapsed_s']:.3f} s ({stats['goodput_elems_per_s']:.0f} elem/s), {stats['packets_sent']} "
              f"packets, {extra}{check}")
    if not ok:
        assert verdict is not None
        print(f"worker: verification failed: {verdict.message}", file=sys.stderr)
        return EXIT_VERIFY_FAILED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
