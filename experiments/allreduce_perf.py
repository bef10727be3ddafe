"""All-reduce performance in nccl-tests' format (`all_reduce_perf`), for any algorithm, on the Mininet network.

    python -m experiments.allreduce_perf --protocol switchml --workers 4 -b 4K -e 1M -f 4 -n 3 -w 1 [--bw 10]
                                         [-c 1] [-F runs.csv]
    make perf ALGO=ring WORKERS=8 BW=10

One network (a star of WORKERS hosts, embedded switch unless --target) serves every size, from -b to -e bytes
multiplying by -f; each size runs -w warm-up all-reduces, then -n timed ones, every worker verifying its result (-c 0
still verifies: a worker always checks). Columns as nccl-tests prints them, then this testbed's own:

    size (B), count (elements), type, redop, root, time (us: the mean of the slowest worker's time over -n runs),
    algbw (GB/s) = size / time, busbw (GB/s) = algbw x 2(n-1)/n, #wrong (ranks whose result failed), link% (algbw over
    the link rate; - on unlimited links), elem/s (aggregated elements per second, count / time), bound (the verdict
    of experiments/bound.py for the last run)

busbw uses nccl-tests' all-reduce factor 2(n-1)/n for every algorithm, as its header says: the bandwidth a ring
all-reduce would need on each link to take `time`. An in-network all-reduce sends each byte once per worker, so its
algbw can exceed what its link carries x n / 2(n-1); that advantage shows as algbw beside busbw.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from experiments.config import ExperimentConfig
from experiments.session import ExperimentNetwork
from topo.target import Target
from worker.arguments import Parser, at_least, fail, link_rate
from worker.protocols import DEFAULT_PROTOCOL, PROTOCOLS

__all__ = ["main", "sizes", "parse_size"]

ITEMSIZE = 4
"""float32 / int32."""


def parse_size(text: str) -> int:
    """nccl-tests' size syntax: 1024, 4K, 16M, 1G (powers of 1024)."""
    m = re.fullmatch(r"(\d+)([KMG]?)B?", text.strip().upper())
    if not m:
        raise ValueError(f"{text!r} is not a size like 4096, 4K, 1M")
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def sizes(minbytes: int, maxbytes: int, factor: int) -> list[int]:
    """The sizes nccl-tests runs: minbytes, x factor, ... up to maxbytes, each a whole number of elements."""
    out, size = [], minbytes
    while size <= maxbytes:
        out.append(max(ITEMSIZE, size - size % ITEMSIZE))
        if factor <= 1:
            break
        size *= factor
    return out


def _size_arg(text: str) -> int:
    try:
        value = parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    if value < ITEMSIZE:
        raise argparse.ArgumentTypeError(f"{text!r}: at least {ITEMSIZE} bytes (one element)")
    return value


COLUMNS = ("size_bytes", "count", "type", "redop", "root", "time_us", "algbw_gbps", "busbw_gbps", "wrong",
           "link_percent", "elems_per_s", "bound")


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="python -m experiments.allreduce_perf", description=__doc__.split("\n\n")[0])
    p.add_argument("--protocol", "--algo", dest="protocol", choices=sorted(PROTOCOLS), default=DEFAULT_PROTOCOL)
    p.add_argument("--workers", "-g", type=at_least(2), default=4, help="workers (nccl-tests: -g GPUs)")
    p.add_argument("-b", "--minbytes", type=_size_arg, default=4096)
    p.add_argument("-e", "--maxbytes", type=_size_arg, default=1 << 20)
    p.add_argument("-f", "--stepfactor", type=at_least(1), default=4)
    p.add_argument("-n", "--iters", type=at_least(1), default=3)
    p.add_argument("-w", "--warmup_iters", type=at_least(0), default=1)
    p.add_argument("-c", "--check", type=int, choices=(0, 1), default=1,
                   help="accepted for nccl-tests' command lines; every worker verifies its result either way")
    p.add_argument("-F", "--csv", type=Path, default=None, help="also write the rows to this CSV file")
    p.add_argument("--bw", type=link_rate(), default=None, metavar="MBIT|auto",
                   help="link rate (default: unlimited); auto: calibrated to the switch and the hosts (a probe first)")
    p.add_argument("--target", choices=[t.value for t in Target], default="embedded")
    p.add_argument("--program-dir", type=Path, default=Path(__file__).resolve().parents[1] / "out")
    p.add_argument("--run-dir", type=Path, default=Path("/tmp/ina-testbed/allreduce-perf"))
    args = p.parse_args(argv)
    if args.maxbytes < args.minbytes:
        return fail(p.prog, f"-e {args.maxbytes} is below -b {args.minbytes}")
    n = args.workers
    try:
        target, why = Target.explain(args.target)
        cfg = ExperimentConfig(protocol=args.protocol, workers=n, size=args.minbytes // ITEMSIZE,
                               bw=None if args.bw == "auto" else args.bw, target=target, program_dir=args.program_dir,
                               run_dir=args.run_dir, timeout_s=300.0)
        cfg.check()
    except (ValueError, OSError) as err:
        return fail(p.prog, str(err))
    if os.geteuid() != 0:
        return fail(p.prog, "Mininet needs root: run `sudo make perf`")
    if args.bw == "auto":
        from experiments.calibrate import calibrate

        cal = calibrate(cfg)
        print(f"# link rate auto: {cal.describe()}", flush=True)
        args.bw = cal.bw_mbps
        cfg = replace(cfg, bw=args.bw)
    factor = 2 * (n - 1) / n
    print(f"# {why}", flush=True)
    print(f"# all_reduce_perf (nccl-tests' columns): {args.protocol}, {n} workers, links "
          f"{f'{args.bw:g} Mbit/s' if args.bw else 'unlimited'}; -b {args.minbytes} -e {args.maxbytes} "
          f"-f {args.stepfactor} -n {args.iters} -w {args.warmup_iters} -c {args.check}")
    print(f"# busbw = algbw x 2(n-1)/n = algbw x {factor:.4f} for every algorithm (nccl-tests' all-reduce factor); "
          "link% = algbw / link rate; time = the slowest worker's, mean of -n runs")
    print(f"#{'size':>11} {'count':>12} {'type':>7} {'redop':>6} {'root':>5} {'time':>10} {'algbw':>9} {'busbw':>9} "
          f"{'#wrong':>6} {'link%':>6} {'elem/s':>12} {'bound':>10}")
    print(f"#{'(B)':>11} {'(elements)':>12} {'':>7} {'':>6} {'':>5} {'(us)':>10} {'(GB/s)':>9} {'(GB/s)':>9} "
          f"{'':>6} {'':>6} {'':>12} {'':>10}")
    rows: list[dict[str, object]] = []
    wrong_total, busbws = 0, []
    with ExperimentNetwork(cfg) as net:
        for size in sizes(args.minbytes, args.maxbytes, args.stepfactor):
            count = size // ITEMSIZE
            run_cfg = replace(cfg, size=count)
            for k in range(args.warmup_iters):
                net.run(replace(run_cfg, seed=1000 + k))
            times, wrong, bound = [], 0, "-"
            for k in range(args.iters):
                r = net.run(replace(run_cfg, seed=k + 1))
                wrong += sum(not w.ok for w in r.workers)
                times.append(r.elapsed_s)
                bound = r.bound.verdict if r.bound else "-"
            t = statistics.mean(times)
            algbw = size / t / 1e9 if t > 0 else 0.0
            link = f"{100 * algbw * 8e3 / args.bw:.1f}" if args.bw else "-"
            row = {"size_bytes": size, "count": count, "type": "float", "redop": "sum", "root": -1,
                   "time_us": round(t * 1e6, 1), "algbw_gbps": round(algbw, 6), "busbw_gbps": round(algbw * factor, 6),
                   "wrong": wrong, "link_percent": link, "elems_per_s": round(count / t) if t > 0 else 0,
                   "bound": bound}
            rows.append(row)
            wrong_total += wrong
            busbws.append(algbw * factor)
            print(f" {size:>11} {count:>12} {'float':>7} {'sum':>6} {-1:>5} {t * 1e6:>10.1f} {algbw:>9.6f} "
                  f"{algbw * factor:>9.6f} {wrong:>6} {link:>6} {row['elems_per_s']:>12} {bound:>10}", flush=True)
    print(f"# Out of bounds values : {wrong_total} {'OK' if wrong_total == 0 else 'FAILED'}")
    print(f"# Avg bus bandwidth    : {statistics.mean(busbws):.6f}")
    if args.csv is not None:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(COLUMNS))
            w.writeheader()
            w.writerows(rows)
    return 0 if wrong_total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
