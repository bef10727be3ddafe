"""The default experiment: N workers all-reduce a tensor through one P4 switch in Mininet (`make run`).

    python -m experiments.run [--protocol switchml|atp|ring|ps] [--workers 4] [--size 65536] [--loss 0.01] [--bw MBIT]
                              [--dtype float32|int32] [--sparsity 0.9] [--sparse-overlap 0.5]
                              [--target embedded|bmv2] [--program-dir out]
                              [--json out/switchml.json --p4info out/switchml.p4info.txt]
                              [--topo star|twotier|leafspine] [--racks 2] [--spines 2] [--levels 1|2]
                              [--ecn-threshold PACKETS]
                              [--fault-plan PLAN] [--kill-rank R:S] [--restart-switch-after S]
                              [--cpus split|shared] [--tls [DIR]]

`--protocol` (alias `--protocol`) picks the protocol (`worker.protocols.PROTOCOLS`): in-network aggregation (`switchml`, `atp`) or a
host-based baseline (`ring`, `ps`) whose TCP traffic the same switch forwards as plain L2 (and drops with the same
LOSS). The switch runs the program the collective names (`out/<program>.json` unless --json is given); `atp` adds a
parameter server host (`python -m worker.atp.ps`, the last host) and reports where each contribution was
aggregated: in the switch or at the PS.
`--bw` limits every link to that many Mbit/s (htb; the table then reports goodput as a fraction of the link rate).
`--topo twotier --racks K` spreads the workers over K rack switches under a PS rack switch (topo.twotier), one
switch process per switch; ATP then aggregates on two levels (or one, `--levels 1`), and the table adds the traffic
on the racks' uplinks and on the PS's link and each switch's counters. `--topo leafspine --racks K --spines S` wires
K leaves of workers and the PS's leaf to each of S spines (topo.leafspine: routes per destination, ATP's first level
on the leaves, its second on the PS's leaf).

Starts the network (topo.fabric) with P4Switch nodes (embedded or BMv2), pushes the program and the job with the
controller to every switch, sets the simulated loss, runs one `python -m worker --verify` per host (they start the
all-reduce together through a start barrier, so its timing excludes process start-up), waits (bounded) and prints a
table: correct ✓/✗, elements, time, goodput, retransmissions, and the switches' counters. `--cpus split` (default)
runs each switch process on a CPU of its own and the hosts' processes on the others (topo.cpus); `shared` lets the
scheduler place them. Exit status 0 only if every worker verified.
LOSS is the probability that the switch drops a packet on each worker port, in each direction.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from experiments.config import WINDOW_CONTROLS, ExperimentConfig
from experiments.result import fault_report
from experiments.session import run_experiment
from topo.cpus import CPU_LAYOUTS
from topo.p4switch import log_tail
from topo.target import Target
from topo.topologies import TOPOLOGIES
from worker.arguments import Parser, at_least, existing_file, fail, in_range, link_rate, positive_float, probability
from worker.job import MAX_SLOTS, MAX_WORKERS
from worker.protocols import PROTOCOLS, default_windows


def _rank_after(text: str) -> tuple[int, float]:
    rank, sep, after = text.partition(":")
    try:
        return int(rank), float(after if sep else "0")
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not RANK:SECONDS") from None


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m experiments.run", description=__doc__.split("\n\n")[0])
    d = ExperimentConfig()
    p.add_argument("--protocol", "--algo", dest="protocol", choices=sorted(PROTOCOLS), default=d.protocol,
                   help="the all-reduce: in-network aggregation or a host-based baseline (default %(default)s)")
    p.add_argument("--workers", type=in_range(1, MAX_WORKERS), default=d.workers)
    p.add_argument("--size", type=at_least(1), default=d.size, help="tensor elements per worker")
    p.add_argument("--loss", type=probability(below_one=True), default=d.loss,
                   help="drop probability per port and direction, in [0, 1)")
    p.add_argument("--sparsity", type=probability(), default=d.sparsity, metavar="F",
                   help="fraction of 64-element blocks that are all zero in each worker's tensor, drawn independently "
                        "per worker (default 0: dense)")
    p.add_argument("--sparse-overlap", type=probability(), default=d.sparse_overlap, metavar="F",
                   help="with --sparsity: probability that a block's zero/non-zero draw is one all workers share "
                        "instead of each worker's own (default 0: independent; 1: the same zero blocks everywhere)")
    p.add_argument("--bw", type=link_rate(), default=None, metavar="MBIT|auto",
                   help="limit every link to MBIT Mbit/s (htb; default: unlimited veth); auto: the highest rate at "
                        "which the switch stays below 60 %% of a CPU with every link full, from a probe run "
                        "(experiments.calibrate)")
    p.add_argument("--dtype", choices=["float32", "int32"], default=d.dtype)
    p.add_argument("--target", choices=[t.value for t in Target], default=None,
                   help="switch target (default: $TARGET, else bmv2 if installed, else embedded)")
    p.add_argument("--program-dir", type=Path, default=d.program_dir,
                   help="where the compiled programs are (<program>.json, <program>.p4info.txt; default %(default)s)")
    p.add_argument("--json", dest="program_json", type=existing_file, default=None,
                   help="the compiled program (default: PROGRAM_DIR/<the collective's program>.json)")
    p.add_argument("--p4info", type=existing_file, default=None)
    p.add_argument("--pool-size", type=in_range(1, MAX_SLOTS), default=d.pool_size, help="slots given to the job")
    p.add_argument("--window", type=at_least(1), default=d.window,
                   help="packets in flight per worker, at most --pool-size (default: the protocol's, "
                        + default_windows() + ")")
    p.add_argument("--window-control", choices=WINDOW_CONTROLS, default=d.window_control,
                   help="switchml: fixed keeps every slot of the window in flight (SwitchML's published worker), "
                        "adaptive at most rate x (min RTT + 5 ms) packets (default %(default)s)")
    p.add_argument("--seed", type=at_least(0), default=d.seed,
                   help="seed of the workers' inputs and of the embedded switch's random() (its loss simulator)")
    p.add_argument("--timeout", type=positive_float, default=d.timeout_s, help="bound on the workers' run, seconds")
    p.add_argument("--run-dir", type=Path, default=d.run_dir, help="job file and switch log go here")
    p.add_argument("--topo", choices=list(TOPOLOGIES), default=d.topo,
                   help="star: one switch; twotier: rack switches under a PS rack switch; leafspine: leaves and the "
                        "PS's leaf under --spines spines (default %(default)s)")
    p.add_argument("--racks", type=at_least(1), default=d.racks,
                   help="twotier, leafspine: racks of workers (default %(default)s)")
    p.add_argument("--spines", type=at_least(1), default=d.spines, help="leafspine: spines (default %(default)s)")
    p.add_argument("--levels", type=int, choices=(1, 2), default=d.levels,
                   help="twotier, leafspine atp: aggregate in the racks' switches and the PS's switch (2), or only in "
                        "the PS's switch (1) (default %(default)s)")
    p.add_argument("--fault-plan", type=existing_file, default=None, metavar="PLAN",
                   help="a fault plan for the job (worker.faults: drop/duplicate/delay/corrupt packets by kind, rank, "
                        "slot; reset the job's switch state), applied by the embedded switch, seeded by --seed")
    p.add_argument("--kill-rank", type=_rank_after, default=None, metavar="R:S",
                   help="kill worker rank R S seconds into the all-reduce (the run then names the missing rank)")
    p.add_argument("--restart-switch-after", type=positive_float, default=None, metavar="S",
                   help="kill the switch S seconds into the all-reduce and start it again, re-programmed")
    p.add_argument("--cpus", choices=CPU_LAYOUTS, default=d.cpus,
                   help="split: each switch process on a CPU of its own, the hosts' processes on the others (with "
                        "at least twice as many CPUs as switches); shared: the scheduler places them "
                        "(default %(default)s)")
    p.add_argument("--pcap", action="store_true",
                   help="every switch writes a pcap per port and direction into RUN_DIR/pcap/ (decode one with "
                        "python -m worker.scapy_layers PROGRAM.json FILE)")
    p.add_argument("--trace", type=Path, default=None, metavar="FILE",
                   help="write the run's timeline to FILE (Chrome trace-event JSON: open it in https://ui.perfetto.dev"
                        " or chrome://tracing): a track per worker and slot/aggregator, the switch and the PS")
    p.add_argument("--tls", type=Path, nargs="?", const=d.program_dir / "tls", default=None, metavar="DIR",
                   help="P4Runtime over TLS with client auth: the switches get a certificate and require the "
                        "controllers' (a throwaway CA and certificates in DIR, made if missing; default DIR "
                        "%(const)s)")
    p.add_argument("--ecn-threshold", type=at_least(1), default=None, metavar="PACKETS",
                   help="atp: mark ECN on packets that leave an egress queue at least this deep (default: off)")
    p.add_argument("--queue", dest="queue_packets", type=at_least(1), default=None, metavar="PACKETS",
                   help="with --bw: each link end queues at most PACKETS and drops the rest (default: the kernel's "
                        "1000)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    prog = "python -m experiments.run"
    args = _parser().parse_args(argv)
    try:  # every value checked before anything is started or written
        target, why = Target.explain(args.target)
        cfg = ExperimentConfig(protocol=args.protocol, bw=None if args.bw == "auto" else args.bw,
                               workers=args.workers, size=args.size, loss=args.loss, sparsity=args.sparsity,
                               sparse_overlap=args.sparse_overlap, dtype=args.dtype, target=target,
                               program_json=args.program_json, p4info=args.p4info, program_dir=args.program_dir,
                               pool_size=args.pool_size,
                               window=args.window, window_control=args.window_control, timeout_s=args.timeout,
                               seed=args.seed, run_dir=args.run_dir,
                               topo=args.topo, racks=args.racks, levels=args.levels, spines=args.spines,
                               ecn_threshold=args.ecn_threshold,
                               queue_packets=args.queue_packets,
                               fault_plan=args.fault_plan, kill_rank_after=args.kill_rank,
                               restart_switch_after_s=args.restart_switch_after, cpus=args.cpus, pcap=args.pcap,
                               trace=args.trace, tls=args.tls)
        cfg.check()
    except (ValueError, OSError) as err:
        return fail(prog, str(err))
    if os.geteuid() != 0:
        print("error: Mininet needs root: run `sudo make run`", file=sys.stderr)
        return 2
    print(why, flush=True)
    if cfg.tls is not None:
        print(f"P4Runtime over TLS, client certificates required (CA and certificates in {cfg.tls})", flush=True)
    try:
        if args.bw == "auto":
            from experiments.calibrate import calibrate

            cal = calibrate(cfg)
            print(f"link rate auto: {cal.describe()}", flush=True)
            cfg = replace(cfg, bw=cal.bw_mbps)
        result = run_experiment(cfg)
    except Exception as err:  # one clear line (plus the switch log if it is a startup failure)
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(result.table())
    if cfg.fault_plan is not None:
        print("\n" + fault_report(cfg, result.switch_log))
    if cfg.trace:
        print(f"\ntimeline in {cfg.trace} (open it in https://ui.perfetto.dev or chrome://tracing)")
    if cfg.pcap:
        print(f"\npcaps in {cfg.run_dir / 'pcap'} (python -m worker.scapy_layers {cfg.program_files[0]} FILE "
              "decodes one)")
    if not result.correct:
        print(f"\nswitch log ({result.switch_log}):\n{log_tail(result.switch_log)}", file=sys.stderr)
    return 0 if result.correct else 1


if __name__ == "__main__":
    sys.exit(main())
