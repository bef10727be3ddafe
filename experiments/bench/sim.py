"""How fast and how big the packet simulator runs: one all-reduce of `size` int32 elements per worker through an
in-network protocol's P4 program (by default the default protocol's: SwitchML, 64 elements = 256 B of payload per
packet) at 100 Gbit/s, verified exactly, for each worker count; with `--racks R`, on a two-tier network of R rack
switches with a protocol that aggregates on two levels (ATP: up to 32 racks of 32 workers).

    python -m experiments.bench.sim --workers 64 256 --size-mib 4 --out results/bench/sim   (make bench-sim)
    python -m experiments.bench.sim --protocol atp --racks 32 --workers 1024 --size-mib 0.25 --out results/bench/sim-twotier

Each point runs in a process of its own (its peak RSS is then the point's alone) and reports wall time, simulated
time, SimPy events and the deliveries they carried per second, peak RSS, and whether every rank's result was the
exact sum. Writes <out>.md (the table, the machine, the commit) and appends to <out>-history.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from experiments.rows import write_dicts
from perf.machine import machine_info
from worker.arguments import Parser, at_least
from worker.protocols import DEFAULT_PROTOCOL, in_network

__all__ = ["main", "one", "shifted_inputs"]

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("date", "commit", "protocol", "workers", "racks", "size_mib", "gbps", "verified", "wall_s", "sim_ms", "events", "deliveries",
          "events_per_s", "deliveries_per_s", "peak_rss_mib", "setup_s")


def one(protocol: str, workers: int, size: int, gbps: float, seed: int = 1, racks: int = 0) -> dict[str, object]:
    """One point, in this process: build the network and inputs, run, verify; the figures as a dict. `racks` > 0:
    a two-tier network of that many rack switches (the protocol aggregating on two levels), else a star."""
    from experiments.simulate import check_results, sim_program
    from topo.inprocess import make_jobs
    from topo.sim import LinkSpec, SimNetwork
    from worker.job import PoolRange
    from worker.protocols import PROTOCOLS

    t0 = time.perf_counter()
    spec = PROTOCOLS[protocol]
    program, p4info = sim_program(str(spec.program), workers)
    per = spec.codec.from_program_json(program).num_elems
    link = LinkSpec(gbps * 1e9, 1e-6)
    net: SimNetwork
    if racks:
        from topo.sim.fabric import FabricSimNetwork, fabric_job
        from topo.twotier import TwoTierFabric

        fabric = TwoTierFabric(workers, racks=racks, levels=2, ps=spec.needs_ps)
        net = FabricSimNetwork(program, fabric, [fabric_job(fabric, per, PoolRange(0, 64))], p4info=p4info,
                                protocol=spec, seed=seed, link=link)
    else:
        jobs = make_jobs(1, workers, per, PoolRange(0, 64), ps=spec.needs_ps)
        net = SimNetwork(program, jobs, p4info=p4info, protocol=spec, seed=seed, link=link)
    inputs = shifted_inputs(size, per, workers, seed + 1)
    setup = time.perf_counter() - t0
    run = net.allreduce({1: inputs}, "int32")[1]
    rep = net.report()
    ok = all(v.ok for v in check_results(net, 1, run.runs, inputs, "int32"))
    return {"protocol": protocol, "workers": workers, "racks": racks, "size_mib": size * 4 / (1 << 20), "gbps": gbps,
            "verified": int(ok), "wall_s": round(rep.wall_s, 2), "sim_ms": round(rep.sim_s * 1e3, 4),
            "events": rep.events, "deliveries": rep.deliveries, "events_per_s": round(rep.events_per_s),
            "deliveries_per_s": round(rep.deliveries / rep.wall_s) if rep.wall_s else 0,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "setup_s": round(setup, 2)}


def shifted_inputs(size: int, per: int, workers: int, seed: int) -> list[np.ndarray]:
    """Every rank's int32 input as a window of one random sequence, rank r's starting r packets (of `per` elements)
    further: distinct data in every (rank, packet), in size + workers * per elements instead of workers * size (at
    1,024 workers x 4 MiB, 8 MiB instead of 4 GiB). Values are divided by the workers so that no sum leaves int32
    (a protocol that saturates, ATP, would otherwise send overflowing blocks raw to its PS)."""
    from worker.verify import rank_input

    base = rank_input(size + workers * per, seed, 0, "int32") // workers
    base.flags.writeable = False
    return [base[r * per: r * per + size] for r in range(workers)]


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m experiments.bench.sim", description=__doc__.split("\n\n")[0])
    p.add_argument("--protocol", choices=sorted(in_network()), default=DEFAULT_PROTOCOL)
    p.add_argument("--workers", type=at_least(1), nargs="+", default=[64, 256])
    p.add_argument("--size-mib", type=float, default=4.0, help="tensor per worker, MiB of int32 (default 4)")
    p.add_argument("--gbps", type=float, default=100.0)
    p.add_argument("--racks", type=at_least(0), default=0,
                   help="a two-tier network of this many rack switches (a protocol aggregating on two levels: ATP); "
                        "0: a star")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "sim")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one point, JSON on stdout
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    size = int(args.size_mib * (1 << 20)) // 4
    if args.one:
        print(json.dumps(one(args.protocol, args.workers[0], size, args.gbps, racks=args.racks)))
        return 0
    info = machine_info()
    rows = []
    for n in args.workers:
        print(f"sim bench: {n} workers x {args.size_mib:g} MiB at {args.gbps:g} Gbit/s ...", file=sys.stderr, flush=True)
        r = subprocess.run([sys.executable, "-m", "experiments.bench.sim", "--one", "--protocol", args.protocol,
                            "--workers", str(n), "--racks", str(args.racks),
                            "--size-mib", str(args.size_mib), "--gbps", str(args.gbps)],
                           capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            return 1
        row = {"date": info.get("date (UTC)", ""), "commit": info.get("commit", ""), **json.loads(r.stdout)}
        print(f"  {row}", file=sys.stderr)
        rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    history = args.out.with_name(args.out.name + "-history.csv")
    old = list(csv.DictReader(history.open())) if history.is_file() else []
    write_dicts(history, FIELDS, old + rows)
    where = f"two-tier, {args.racks} rack switches" if args.racks else "a star"
    lines = [f"# Packet simulator: one all-reduce at scale ({args.gbps:g} Gbit/s, {args.size_mib:g} MiB of int32 per "
             f"worker, {args.protocol}'s P4 program and workers, {where})", "",
             *[f"- {k}: {v}" for k, v in info.items()], "",
             "| workers | verified | wall s | simulated ms | events | deliveries | deliveries/s | peak RSS MiB |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['workers']} | {'yes' if r['verified'] else 'NO'} | {r['wall_s']} | {r['sim_ms']} | {r['events']} | "
              f"{r['deliveries']} | {r['deliveries_per_s']} | {r['peak_rss_mib']} |" for r in rows]
    lines += ["", "Command: `make bench-sim` (python -m experiments.bench.sim); history: "
              f"{history.relative_to(ROOT) if history.is_relative_to(ROOT) else history}.", ""]
    args.out.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
