"""The switch benchmark's report: Markdown (machine, method, absolute figures, ratios) and a CSV of every row."""

from __future__ import annotations

import csv
import dataclasses
import statistics
import sys
from pathlib import Path

from perf.engine import EngineResult
from perf.family import TITLES as FAMILY_TITLES
from perf.jobreplay import JOB_TITLES
from perf.harness import Measurement, Settings, SwitchUnderTest
from perf.ratesearch import MAX_BACKLOG_FRACTION, MAX_LOSS, MIN_BACKLOG_S
from perf.switchml_job import WORKLOAD

CSV_FIELDS = ("kind", "program", "compiler", "mode", "switch", "rep", "value", "unit", "offered_pps", "loss",
              "switch_cpu", "sender_cpu", "receiver_cpu", "probes", "sender_limited", "note")
TITLES = {"basic_forward": "basic_forward (IPv4 LPM)", "agg64": "agg64 (64 × int32 into registers)",
          WORKLOAD: f"{WORKLOAD}.p4, 4-worker all-reduce", **JOB_TITLES, **FAMILY_TITLES}
Series = tuple[str, str, str]
"""(program, compiler, mode): Measurement.series."""


def title(series: Series) -> str:
    """How the report names a series: program [compiler], and the mode unless it is the loss-free rate."""
    program, compiler, mode = series
    return f"{TITLES.get(program, program)} [{compiler}]" + ("" if mode in ("loss-free", "job") else f", {mode}")


@dataclasses.dataclass
class Report:
    """Everything one harness run measured."""

    machine: dict[str, str]
    settings: Settings
    switches: list[SwitchUnderTest]
    rows: list[Measurement]
    engine: list[EngineResult]
    compiler: str
    command: str = "python -m perf.switchbench"
    """The command line that produced the report."""


@dataclasses.dataclass(frozen=True)
class Ratio:
    """`switch` / `base` for one series: per repetition (both measured back to back) and their median."""

    series: Series
    switch: str
    base: str
    per_rep: tuple[float, ...]

    @property
    def program(self) -> str:
        return self.series[0]

    @property
    def median(self) -> float | None:
        return statistics.median(self.per_rep) if self.per_rep else None


def medians(rows: list[Measurement]) -> dict[tuple[Series, str], float | None]:
    """(series, switch) → median of its successful repetitions (None if none succeeded)."""
    values: dict[tuple[Series, str], list[float]] = {}
    for m in rows:
        values.setdefault((m.series, m.switch), [])
        if m.value:
            values[(m.series, m.switch)].append(m.value)
    return {k: statistics.median(v) if v else None for k, v in values.items()}


def ratio(rows: list[Measurement], series: Series, switch: str, base: str) -> Ratio:
    """switch / base per repetition where both produced a figure."""
    by = {(m.switch, m.rep): m.value for m in rows if m.series == series}
    reps = sorted({m.rep for m in rows if m.series == series})
    per = tuple(by[(switch, r)] / by[(base, r)] for r in reps if by.get((switch, r)) and by.get((base, r)))
    return Ratio(series, switch, base, per)


def ratios(report: Report) -> list[Ratio]:
    """The first switch (always the embedded one) over every other, per series: embedded / X."""
    first = report.switches[0].name
    series = list(dict.fromkeys(m.series for m in report.rows))
    return [ratio(report.rows, x, first, sut.name) for x in series for sut in report.switches[1:]]


@dataclasses.dataclass(frozen=True)
class Headline:
    """The minimum and median over the packet programs of the median ratios of one (compiler, mode, switch)."""

    compiler: str
    mode: str
    switch: str
    base: str
    per_program: tuple[tuple[str, float], ...]
    """(program, its median ratio), lowest first."""

    @property
    def minimum(self) -> tuple[str, float]:
        return self.per_program[0]

    @property
    def median(self) -> float:
        return statistics.median(v for _p, v in self.per_program)


def headlines(report: Report) -> list[Headline]:
    """Per compiler and mode (loss-free, overload), the packet programs' median ratios, for every switch pair."""
    groups: dict[tuple[str, str, str, str], list[tuple[str, float]]] = {}
    for r in ratios(report):
        program, compiler, mode = r.series
        if mode in ("loss-free", "overload") and r.median is not None:
            groups.setdefault((compiler, mode, r.switch, r.base), []).append((program, r.median))
    return [Headline(c, m, sw, b, tuple(sorted(v, key=lambda x: x[1]))) for (c, m, sw, b), v in groups.items()]


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.1f} kpps" if unit == "frames/s" else f"{value:,.0f} elem/s"


def write_csv(report: Report, path: Path) -> None:
    """One row per measurement, per median, per ratio and per engine mode."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        def opt(v: float | None, fmt: str) -> str:
            return "" if v is None else format(v, fmt)

        for m in report.rows:
            w.writerow({"kind": "measurement", "program": m.program, "compiler": m.compiler, "mode": m.mode,
                        "switch": m.switch, "rep": m.rep, "value": opt(m.value, ".0f"), "unit": m.unit,
                        "offered_pps": opt(m.offered_pps, ".0f"), "loss": opt(m.loss, ".5f"),
                        "switch_cpu": opt(m.switch_cpu, ".2f"), "sender_cpu": opt(m.sender_cpu, ".2f"),
                        "receiver_cpu": opt(m.receiver_cpu, ".2f"), "probes": m.probes,
                        "sender_limited": int(m.sender_limited), "note": m.note})
        units = {(m.series, m.switch): m.unit for m in report.rows}
        for (x, sw), v in medians(report.rows).items():
            w.writerow({"kind": "median", "program": x[0], "compiler": x[1], "mode": x[2], "switch": sw,
                        "value": opt(v, ".0f"), "unit": units[(x, sw)]})
        for r in ratios(report):
            p, c, mode = r.series
            for i, v in enumerate(r.per_rep, 1):
                w.writerow({"kind": "ratio", "program": p, "compiler": c, "mode": mode, "switch": r.switch, "rep": i,
                            "value": f"{v:.4f}", "unit": f"{r.switch} / {r.base}"})
            w.writerow({"kind": "ratio", "program": p, "compiler": c, "mode": mode, "switch": r.switch,
                        "rep": "median", "value": opt(r.median, ".4f"), "unit": f"{r.switch} / {r.base}"})
        for h in headlines(report):
            w.writerow({"kind": "headline", "program": h.minimum[0], "compiler": h.compiler, "mode": h.mode,
                        "switch": h.switch, "rep": "minimum", "value": f"{h.minimum[1]:.4f}",
                        "unit": f"{h.switch} / {h.base}", "note": f"over {len(h.per_program)} programs"})
            w.writerow({"kind": "headline", "program": "", "compiler": h.compiler, "mode": h.mode,
                        "switch": h.switch, "rep": "median", "value": f"{h.median:.4f}",
                        "unit": f"{h.switch} / {h.base}", "note": f"over {len(h.per_program)} programs"})
        for e in report.engine:
            w.writerow({"kind": "engine", "program": e.program, "compiler": e.compiler, "mode": e.mode,
                        "switch": "embedded", "rep": "median", "value": f"{e.pps:.0f}", "unit": "frames/s",
                        "switch_cpu": f"{e.cpu_share:.2f}",
                        "note": f"{e.how}; {len(e.rates)} runs, {e.packets} frames; {e.shape}"})


def markdown(report: Report, csv_name: str) -> str:
    """The report's Markdown text."""
    s = report.settings
    names = [x.name for x in report.switches]
    lines = ["# Switch benchmark", "",
             f"Produced by `{report.command.replace(sys.executable, 'python')}` (`make bench-switch` runs "
             f"`python -m perf.switchbench --out results/bench/switch.md`); every measurement, median and ratio is also in "
             f"`{csv_name}`.", "",
             "**Absolute figures** (kpps, elements/s) hold for this machine and its load only. **Ratios** divide "
             "two switches measured back to back in the same repetition on the same machine: they are the "
             "figures to compare across machines.", ""]
    heads = headlines(report)
    if heads:
        lines += ["## Headline: the family's minimum and median", "",
                  "Each packet program's median ratio (below), then over the programs: the **minimum** (the program "
                  "on which the embedded switch gains least) and the median.", "",
                  "| JSON by | rate | ratio | minimum | median | programs |", "|---|---|---|---:|---:|---:|"]
        for h in heads:
            lines.append(f"| {h.compiler} | {h.mode} | {h.switch} / {h.base} | **{h.minimum[1]:.2f}** "
                         f"({h.minimum[0]}) | **{h.median:.2f}** | {len(h.per_program)} |")
        lines.append("")
    lines += ["## Machine", ""]
    lines += [f"- {k}: {v}" for k, v in report.machine.items()]
    lines += ["", "## Switches", "", "| switch | command |", "|---|---|"]
    lines += [f"| {x.name} | `{x.shown}` |" for x in report.switches]
    if len(report.switches) == 1:
        lines += ["", "Only the embedded switch ran here (no `simple_switch_grpc` on PATH, no `--compare`), so this "
                  "report has no ratios. To get them, run `make bench-switch` on a machine where `simple_switch_grpc` "
                  "(and `p4c-bm2-ss`) are on PATH, or name any switch that takes simple_switch_grpc's flags: "
                  "`python -m perf.switchbench --compare 'simple_switch_grpc'` (repeat `--compare` for more)."]
    programs = set(s.programs)
    lines += ["", "## Method", "",
              f"- Every program is compiled by each compiler ({report.compiler}); every switch gets the same "
              "JSON and P4Info over P4Runtime (SetForwardingPipelineConfig on a switch started with `--no-p4`), then "
              "the same table entries. Each switch is started with the same flags: `--device-id 1 --thrift-port P "
              "-i 1@… -i 2@… --no-p4 -- --grpc-server-addr 127.0.0.1:P`.",
              f"- {s.reps} repetition{'s' if s.reps != 1 else ''}, interleaved: rep 1 runs every switch in turn "
              f"({', '.join(names)}), then rep 2 starting with the next switch, and so on (which switch runs first "
              "rotates); a fresh switch process each time, on the same namespaces and veth pairs."
              + (" Before rep 1, an unreported warm-up round of the same (quarter-length probes, a quarter of the "
                 "job): without it the first switch run of a program measured low, whichever switch it was."
                 if s.warmup else "")]
    if programs - {WORKLOAD}:
        lines.append(
            "- **Packet programs**: basic_forward (IPv4 LPM, two /32 routes, h1 → h2), agg64 (64 int32 elements "
            "added into 64 register arrays, the sums reflected to h1) and the family generated by `perf.family` "
            "(the same aggregation written six ways: in one action, a ternary or an if/else per element in apply, "
            "one register array with an action call per element, hash-indexed slots, a header stack; and an "
            "L2/L3/ACL pipeline of five tables, h1 → h2). The switch's ports 1 and 2 are veth pairs to namespaces "
            "h1 and h2. A sender process in h1 offers 16 pre-built frames round-robin over AF_PACKET, paced at a "
            "target rate; a receiver process counts the results. A probe offers one rate for "
            f"{s.duration:g} s, then waits until results stop arriving.")
        lines.append(
            "- **loss-free**: the delivered rate (frames received / time from the first send to the last result) "
            f"of the highest probe with loss < {100 * MAX_LOSS:g} % (loss = 1 − received / offered, frames the "
            f"kernel refused counted as lost) whose results stopped within max({MIN_BACKLOG_S:g} s, "
            f"{100 * MAX_BACKLOG_FRACTION:g} % of the probe) after the sender did (no queue building up in "
            f"buffers), found by an exponential ramp from {s.start_rate / 1000:g} kpps (×2), then bisection until "
            f"the passing and failing rates are within {100 * s.tolerance:g} %, at most {s.max_probes} probes; a "
            "2 kpps warm-up precedes each search."
            + (f" **overload**: right after, one probe offering {s.overload:g} × that rate; its delivered rate "
               "is what a saturated emulation gets." if s.overload > 0 else ""))
        lines.append(
            "- *switch / sender / receiver CPU*: each process's CPU time / wall time during the probe (1.0 = one "
            "core busy). Sender, receiver and switch share the machine's CPUs: a switch near 1.0 was the limit; a "
            "sender near 1.0 (or a probe that could not offer its rate) means the traffic generator may have been.")
    if WORKLOAD in programs:
        lines.append(
            "- **switchml**: p4src/switchml.p4 with one 4-worker job installed by the project's controller "
            "(controller.switchml: L2 entries, the job, its multicast group); four `python -m worker` processes, "
            f"one per namespace, all-reduce {s.size:,} float32 elements each (window 32, pool of 64 slots) after "
            "a start barrier, and every result is verified against the float64 reference. Figure: elements / the "
            "slowest worker's all-reduce time. *switch CPU* here: the switch's CPU seconds while the workers ran "
            "/ that all-reduce time.")
    lines += ["- **Ratios**: per repetition (the two switches measured back to back), then the median.",
              "", "## Results (absolute, this machine)", "",
              "| program [JSON by] | switch | median | per repetition | loss | CPU switch / sender / receiver "
              "| probes | notes |", "|---|---|---:|---|---:|---|---:|---|"]
    med = medians(report.rows)
    for m0 in report.rows:
        if m0.rep != 1:
            continue
        reps = [m for m in report.rows if m.series == m0.series and m.switch == m0.switch]
        per = ", ".join(_fmt(m.value, m.unit) for m in reps)
        losses = [m.loss for m in reps if m.loss is not None]
        loss = f"≤ {100 * max(losses):.3f} %" if losses else "–"
        cpu = " / ".join(_median_of([getattr(m, f) for m in reps]) for f in ("switch_cpu", "sender_cpu",
                                                                              "receiver_cpu"))
        probes = "/".join(str(m.probes) for m in reps) if m0.mode == "loss-free" else "–"
        notes = "; ".join(dict.fromkeys(m.note for m in reps if m.note))
        lines.append(f"| {title(m0.series)} | {m0.switch} | **{_fmt(med[(m0.series, m0.switch)], m0.unit)}**"
                     f" | {per} | {loss} | {cpu} | {probes} | {notes} |")
    rs = ratios(report)
    if rs:
        lines += ["", "## Ratios (same machine, back to back)", "",
                  "| program [JSON by] | ratio | median | per repetition |", "|---|---|---:|---|"]
        for r in rs:
            lines.append(f"| {title(r.series)} | {r.switch} / {r.base} | "
                         f"**{'–' if r.median is None else f'{r.median:.2f}'}** | "
                         f"{', '.join(f'{v:.2f}' for v in r.per_rep) or '–'} |")
    if report.engine:
        ours = {e.program: e.pps for e in report.engine if e.compiler == "ours" and e.mode == "in-process"}
        lines += ["", "## Embedded engine without I/O: the simulator's per-packet cost (absolute, this machine)", "",
                  "The embedded switch only: `V1Switch.process(1, frame)` in a loop over the same 16 frames "
                  "(**in-process**: what virtual time pays per simulated packet), and the switch's `PacketLoop` "
                  "(receive a batch, one `drain`) over in-memory ports (**loop**); 5 runs of "
                  f"{s.engine_seconds / 5:g} s each, the median. *CPU* is this process's CPU time / wall time (below "
                  "1.0: other processes took part of the CPU). *ours / this* divides our compiler's in-process rate by "
                  "this row's, for the same source.", "",
                  "| program | JSON by | JSON shape | mode | median kpps | µs per frame | min–max kpps | CPU | "
                  "ours / this |", "|---|---|---|---|---:|---:|---:|---:|---:|"]
        for e in report.engine:
            rel = f"{ours[e.program] / e.pps:.2f}" if e.mode == "in-process" and e.program in ours else "–"
            lines.append(f"| {TITLES.get(e.program, e.program)} | {e.compiler} | {e.shape} | {e.mode} | "
                         f"**{e.pps / 1000:.1f}** | {e.us_per_frame:.1f} | "
                         f"{min(e.rates) / 1000:.1f}–{max(e.rates) / 1000:.1f} | {e.cpu_share:.2f} | {rel} |")
    return "\n".join(lines) + "\n"


def _median_of(values: list[float | None]) -> str:
    known = [v for v in values if v is not None]
    return f"{statistics.median(known):.2f}" if known else "–"


HISTORY_FIELDS = ("date", "commit", "cpu", "load_start", "load_end", "compiler", "mode", "program", "switch", "base",
                  "rep", "ratio")
"""switch-history.csv: one row per repetition's ratio, every run appended (issue 40: figures that hold from day to
day are quoted as the median and range over recent runs, not one run)."""


def append_history(report: Report, path: Path) -> int:
    """Append the report's per-repetition ratios to `path` (header written when the file is new); the rows added."""
    m = report.machine
    fresh = not path.exists() or path.stat().st_size == 0
    added = 0
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HISTORY_FIELDS)
        if fresh:
            w.writeheader()
        for r in ratios(report):
            for i, v in enumerate(r.per_rep, 1):
                w.writerow({"date": m.get("date (UTC)", ""), "commit": m.get("commit", ""), "cpu": m.get("CPU", ""),
                            "load_start": m.get("load average at start", ""),
                            "load_end": m.get("load average at end", ""), "compiler": r.series[1],
                            "mode": r.series[2], "program": r.program, "switch": r.switch, "base": r.base, "rep": i, "ratio": f"{v:.4f}"})
                added += 1
    return added


def write_report(report: Report, out: Path) -> None:
    """`out` (Markdown), the CSV next to it, and the run's ratios appended to switch-history.csv there."""
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path = out.with_suffix(".csv")
    write_csv(report, csv_path)
    out.write_text(markdown(report, csv_path.name))
    append_history(report, out.parent / f"{out.stem}-history.csv")
