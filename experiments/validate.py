"""The packet simulator against the emulator: one scenario on both engines, compared point by point
(`make validate-sim`).

    python -m experiments.validate experiments/scenarios/validate-sim.toml [--mininet DIR] [--results results]

Runs the scenario in Mininet (as `make experiment`; or takes a finished sweep's directory, `--mininet DIR`) and then
on the packet simulator with the emulator's network in the model (`emulated`: the runs' link rate, frames counted
as htb counts them, no preamble or FCS), and writes results/validate-<name>-<UTC time>/: `mininet/` and `sim/` (each
a sweep's runs.csv, summary.md and plots) and `validation.md` + `validation.csv`, the comparison:

- **exact**: per run (point and seed), the result tensors' digests (`runs.csv` result_digest) are equal, and on
  loss-free runs of in-network protocols the frames the workers put on their links (`wire_frames`) are equal;
- **within the tolerance** (10 %): the host baselines' loss-free frames (TCP's ACKs are the model's, not Linux's bit
  for bit), each point's median completion time, the ratio of each protocol's median to the
  scenario's first protocol's at each point (switchml/ring, atp/switchml …), and the time a loss or straggler value
  adds over the axis's first value (the loss and straggler slopes).

A difference is reported, never calibrated away here: docs/simulator.md says what each known one comes from.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from experiments.report import write_report
from experiments.resume import read_rows
from experiments.rows import Row, results_dir
from experiments.scenario import RunPoint, Scenario, ScenarioError, SimModel, load_scenario
from worker.arguments import fail
from worker.protocols import PROTOCOLS

__all__ = ["TOLERANCE", "Check", "Comparison", "compare", "emulated", "main", "markdown"]

PROG = "experiments.validate"
TOLERANCE = 0.10
ROOT = Path(__file__).resolve().parents[1]


def emulated(sc: Scenario, bw_mbps: float) -> Scenario:
    """sc on the simulator with the emulator's network: links of `bw_mbps` (the rate the Mininet runs had) shaped as
    its htb shapes them (frames cost their own length, no preamble, FCS or gap; spaced at the rate by a 1,600 B bucket
    and delivered by the veth with no serialisation delay), unbounded queues (the emulator's hold 1,000 frames, more
    than any run here keeps), line-rate switch and free hosts (the runs are network-bound)."""
    return replace(sc, engine="sim", bw_mbps=bw_mbps, target="embedded",
                   sim=SimModel(delay_us=sc.sim.delay_us, overhead_bytes=0, shaper="htb"))


@dataclass(frozen=True)
class Comparison:
    """One quantity on both engines, with the range the emulator's repetitions give it."""

    kind: str
    """One of: "time" (a point's median completion), "frames" (a host baseline's), "ratio" (to the first protocol),
    "<axis> slope"."""
    what: str
    mininet: float
    sim: float
    tolerance: float = TOLERANCE
    spread: tuple[float, float] | None = None
    """The quantity's range over the emulator's repetitions (min, max), from the extreme runs."""
    bound: str = ""
    """What bound the emulator's runs of the points involved ("network 3/3"; experiments.bound)."""
    sim_spread: tuple[float, float] | None = None
    """The same range over the simulator's repetitions."""
    sampled: bool = False
    """The simulator's repetitions differ by chance (lossy points: the losses fall on other packets), so its median is
    an estimate too; without loss they differ only by the emulator's start times they replay."""

    @property
    def error(self) -> float:
        """sim / mininet - 1 (inf when the emulator's value is 0 and the simulator's is not)."""
        if self.mininet == 0:
            return 0.0 if self.sim == 0 else float("inf")
        return self.sim / self.mininet - 1

    @property
    def ok(self) -> bool:
        return abs(self.error) <= self.tolerance

    @property
    def verdict(self) -> str:
        """"agrees" (within the tolerance), "noisy" (outside it, but the simulator's median lies inside the
        emulator's run-to-run range, or, where both medians are estimates (`sampled`), the two engines' ranges
        overlap: more repetitions decide) or "differs"."""
        if self.ok:
            return "agrees"
        if self.spread is not None and (self.spread[0] <= self.sim <= self.spread[1] or (
                self.sampled and self.sim_spread is not None and self.sim_spread[0] <= self.spread[1]
                and self.spread[0] <= self.sim_spread[1])):
            return "noisy"
        return "differs"


@dataclass(frozen=True)
class Check:
    """An exact check over runs (digests, frames): how many runs matched of how many compared, and the first
    mismatches."""

    kind: str
    matched: int
    compared: int
    mismatches: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.matched == self.compared


def _point(row: Row) -> RunPoint:
    return RunPoint(row.protocol, row.workers, row.size, row.loss, row.straggler_ms, row.background_mbps, row.sparsity,
                    row.overlap)


def _label(p: RunPoint) -> str:
    extra = [f"loss {p.loss:g}" if p.loss else "", f"straggler {p.straggler_ms:g} ms" if p.straggler_ms else "",
             f"background {p.background_mbps:g} Mbit/s" if p.background_mbps else "",
             f"sparsity {p.sparsity:g}" if p.sparsity else "", f"overlap {p.overlap:g}" if p.overlap else ""]
    return " ".join([p.protocol, f"n={p.workers}", f"{p.size} elems", *filter(None, extra)])


class _Times:
    """Each point's verified completion times and bound verdicts on one engine."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self.times: dict[RunPoint, list[float]] = defaultdict(list)
        self.bounds: dict[RunPoint, list[str]] = defaultdict(list)
        for r in rows:
            if r.verified and r.elapsed_s > 0:
                self.times[_point(r)].append(r.elapsed_s)
                self.bounds[_point(r)].append(r.bound or "?")

    def __contains__(self, p: RunPoint) -> bool:
        return p in self.times

    def median(self, p: RunPoint) -> float:
        return statistics.median(self.times[p])

    def lo(self, p: RunPoint) -> float:
        return min(self.times[p])

    def hi(self, p: RunPoint) -> float:
        return max(self.times[p])

    def span(self, p: RunPoint) -> tuple[float, float]:
        """The range of p's times."""
        return self.lo(p), self.hi(p)

    def ratio_span(self, p: RunPoint, base: RunPoint) -> tuple[float, float]:
        """The range of p's time over base's, from the extreme runs."""
        return self.lo(p) / self.hi(base), self.hi(p) / self.lo(base)

    def slope_span(self, p: RunPoint, base: RunPoint) -> tuple[float, float]:
        """The range of p's time less base's, from the extreme runs."""
        return self.lo(p) - self.hi(base), self.hi(p) - self.lo(base)

    def bound(self, *points: RunPoint) -> str:
        """The points' runs' verdicts, counted ("network 5/6, host-cpu 1/6")."""
        verdicts = [b for p in points for b in self.bounds[p]]
        return ", ".join(f"{v} {verdicts.count(v)}/{len(verdicts)}" for v in sorted(set(verdicts), key=verdicts.index))


def _frames(rows: Iterable[Row], p: RunPoint) -> list[float]:
    return [float(r.wire_frames) for r in rows if r.verified and _point(r) == p]


def compare(sc: Scenario, mininet: Sequence[Row], sim: Sequence[Row],
            tolerance: float = TOLERANCE) -> tuple[list[Check], list[Comparison]]:
    """The exact checks and the toleranced comparisons of the two engines' rows of sc (see the module)."""
    by_run = {(_point(r), r.seed): r for r in sim}
    digests, frames = [0, 0, []], [0, 0, []]  # matched, compared, mismatches
    for m in mininet:
        s = by_run.get((_point(m), m.seed))
        if s is None or not (m.verified and s.verified):
            continue
        label = f"{_label(_point(m))} seed {m.seed}"
        for tally, a, b, applies in ((digests, m.result_digest, s.result_digest, bool(m.result_digest)),
                                     (frames, m.wire_frames, s.wire_frames,
                                      m.loss == 0 and PROTOCOLS[m.protocol].in_network)):
            if applies:
                tally[1] += 1
                if a == b:
                    tally[0] += 1
                else:
                    tally[2].append(f"{label}: {a} vs {b}")
    checks = [Check(kind, t[0], t[1], tuple(t[2][:5])) for kind, t in
              (("result digests", digests), ("loss-free wire frames (in-network)", frames))]

    m, s = _Times(mininet), _Times(sim)
    both = [p for p in sc.runs() if p in m and p in s]
    out = [Comparison("time", _label(p), m.median(p), s.median(p), tolerance, m.span(p), m.bound(p), s.span(p),
                      p.loss > 0) for p in both]
    for p in both:  # TCP's frames (its ACKs) are the model's, not Linux's bit for bit: compared, not matched
        if p.loss == 0 and not PROTOCOLS[p.protocol].in_network:
            mf, sf = _frames(mininet, p), _frames(sim, p)
            if mf and sf:
                out.append(Comparison("frames", _label(p), statistics.median(mf), statistics.median(sf), tolerance,
                                      (min(mf), max(mf)), m.bound(p), (min(sf), max(sf))))
    first = sc.protocols[0]
    for p in both:
        base = replace(p, protocol=first)
        if p.protocol != first and base in m and base in s:
            out.append(Comparison("ratio", f"{p.protocol}/{first} at {_label(base).split(' ', 1)[1]}",
                                  m.median(p) / m.median(base), s.median(p) / s.median(base), tolerance,
                                  m.ratio_span(p, base), m.bound(p, base), s.ratio_span(p, base), p.loss > 0))
    for axis in ("loss", "straggler_ms"):
        zero = getattr(sc, axis)[0]
        for p in both:
            base = replace(p, **{axis: zero})
            if p.value(axis) != zero and base in m and base in s:
                out.append(Comparison(f"{axis.split('_')[0]} slope", f"{_label(p)}: over {axis} {zero:g}",
                                      m.median(p) - m.median(base), s.median(p) - s.median(base), tolerance,
                                      m.slope_span(p, base), m.bound(p, base), s.slope_span(p, base), p.loss > 0))
    return checks, out


def _same_starts(a: Sequence[float] | None, b: Sequence[float]) -> bool:
    """Start times equal to the microsecond `start_offsets_ms` keeps."""
    return a is not None and len(a) == len(b) and all(abs(x - y) < 2e-6 for x, y in zip(a, b))


def replayed_starts(mininet: Iterable[Row]) -> dict[tuple[RunPoint, int], list[float]]:
    """Each emulator run's ranks' start times (`Row.starts()`), by point and repetition: the simulator starts its
    ranks then, so that both engines see the same start skew (the emulator's workers share a CPU and leave the start
    barrier one after another) and a straggler's delay overlaps the same start-up of the others."""
    return {(_point(r), r.rep): t for r in mininet if r.verified and (t := r.starts()) is not None}


def markdown(sc: Scenario, checks: Sequence[Check], comparisons: Sequence[Comparison], mininet_dir: Path,
             sim_dir: Path, replayed: int = 0) -> str:
    """validation.md: the exact checks, then every comparison with the simulator's error and verdict. `replayed`:
    the simulated runs that started their ranks when the emulator's run did."""
    def tally(cs: Sequence[Comparison]) -> str:
        return ", ".join(f"{sum(c.verdict == v for c in cs)} {v}" for v in ("agrees", "noisy", "differs"))

    network = [c for c in comparisons if c.bound and all(v.startswith("network") for v in c.bound.split(", "))]
    lines = [f"# {sc.name}: the packet simulator against Mininet", "", sc.description, "",
             f"Emulator runs: `{mininet_dir}`; simulated: `{sim_dir}`. Tolerance {100 * TOLERANCE:.0f} %. "
             f"All {len(comparisons)} comparisons: {tally(comparisons)}; the {len(network)} whose emulator runs were "
             f"all network-bound: {tally(network)}. *noisy*: outside the tolerance, but the simulator's median is "
             "inside the range the emulator's own repetitions give, or, under loss (where the simulator's runs differ "
             "by chance too), the two engines' ranges overlap: more repetitions decide. "
             + (f"{replayed} simulated runs started each rank when the emulator's run did (`start_offsets_ms`)."
                if replayed else "The simulated ranks started at once (the straggler late)."),
             "", "| exact check | matched | of runs | first mismatches |", "|---|---|---|---|"]
    lines += [f"| {c.kind} | {c.matched} | {c.compared} | {'; '.join(c.mismatches)} |" for c in checks]
    lines += ["", "| kind | what | Mininet (range) | simulator (range) | error | verdict | Mininet bound by |",
              "|---|---|---|---|---|---|---|"]

    def ranged(value: float, spread: tuple[float, float] | None, unit: str) -> str:
        return f"{value:.4g}{unit}" + (f" ({spread[0]:.4g} … {spread[1]:.4g})" if spread else "")

    for c in comparisons:
        unit = "" if c.kind in ("ratio", "frames") else " s"
        verdict = c.verdict if c.verdict == "agrees" else f"**{c.verdict}**"
        lines.append(f"| {c.kind} | {c.what} | {ranged(c.mininet, c.spread, unit)} | "
                     f"{ranged(c.sim, c.sim_spread, unit)} | {100 * c.error:+.1f} % | {verdict} | {c.bound} |")
    return "\n".join(lines) + "\n"


def _write_csv(path: Path, comparisons: Sequence[Comparison]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "what", "mininet", "mininet_min", "mininet_max", "sim", "sim_min", "sim_max", "error",
                    "within", "verdict", "mininet_bound"])

        def limits(spread: tuple[float, float] | None) -> list[str]:
            return [f"{v:.6g}" for v in spread] if spread else ["", ""]

        for c in comparisons:
            w.writerow([c.kind, c.what, f"{c.mininet:.6g}", *limits(c.spread), f"{c.sim:.6g}", *limits(c.sim_spread),
                        f"{c.error:.4f}", int(c.ok), c.verdict, c.bound])


def _rows(path: Path) -> list[Row]:
    return [Row.from_csv(d) for d in read_rows(path / "runs.csv")[1]]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m {PROG}", description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path, help="a scenario file with engine = \"mininet\" (the default)")
    p.add_argument("--mininet", type=Path, metavar="DIR", default=None,
                   help="a finished Mininet sweep of the scenario (make experiment's results directory) instead of "
                        "running it")
    p.add_argument("--sim", type=Path, metavar="DIR", default=None,
                   help="a finished simulation of it (a validation's sim/ directory) instead of running it: compare "
                        "again")
    p.add_argument("--results", type=Path, default=ROOT / "results", help="where the validation's directory goes")
    p.add_argument("--simultaneous", action="store_true",
                   help="start the simulated ranks at once (the straggler late), not when the emulator's did")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        sc = load_scenario(args.scenario)
    except ScenarioError as exc:
        return fail(PROG, str(exc))
    if sc.engine != "mininet":
        return fail(PROG, f"{sc.path}: validation compares a Mininet scenario with its simulation: give one with "
                    'network.engine = "mininet"')
    for flag, given in (("--mininet", args.mininet), ("--sim", args.sim)):
        if given is not None and not (given / "runs.csv").is_file():
            return fail(PROG, f"{flag} {given}: no runs.csv there")
    out = results_dir(args.results, f"validation-{sc.name}")
    if args.mininet is None:
        from experiments import sweep

        mininet_dir = out / "mininet"
        mininet_dir.mkdir()
        code = sweep.main([str(sc.path), "--results", str(mininet_dir)] + (["--no-progress"] if args.no_progress
                                                                         else []))
        made = sorted(d for d in mininet_dir.iterdir() if d.is_dir())
        if code != 0 or not made:
            return code or 1
        mininet_dir = made[-1]
    else:
        mininet_dir = args.mininet
    mininet = _rows(mininet_dir)
    rate = next((r.bw_mbps for r in mininet if r.bw_mbps), None)
    if rate is None:
        return fail(PROG, f"{mininet_dir}/runs.csv: no run has a link rate (bw_mbps); a validation needs rate-limited "
                    "links")
    from experiments import simulate

    simulated = emulated(sc, float(rate))
    starts = {} if args.simultaneous else replayed_starts(mininet)
    if args.sim is None:
        sim_dir = out / "sim"
        sim_dir.mkdir()
        sim = simulate.run_scenario(simulated, sim_dir, progress=not args.no_progress,
                                    log=lambda m: print(m, file=sys.stderr), starts=starts)
        write_report(simulated, sim, sim_dir)
    else:
        sim_dir, sim = args.sim, _rows(args.sim)
        ran = {(_point(r), r.rep): r.starts() for r in sim}  # the simulated runs that started as the emulator's did
        starts = {k: t for k, t in starts.items() if _same_starts(ran.get(k), t)}
    checks, comparisons = compare(sc, mininet, sim)
    text = markdown(sc, checks, comparisons, mininet_dir, sim_dir, replayed=len(starts))
    (out / "validation.md").write_text(text)
    _write_csv(out / "validation.csv", comparisons)
    print(text)
    print(f"-> {out}", file=sys.stderr)
    return 0 if all(c.ok for c in checks) and all(c.ok for c in comparisons) else 1


if __name__ == "__main__":
    sys.exit(main())
