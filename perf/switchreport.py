"""The switch benchmark's report: Markdown (machine, method, absolute figures, ratios) and a CSV of every row."""

from __future__ import annotations

import csv
import dataclasses
import statistics
import sys
from pathlib import Path

from perf.engine import EngineResult
from perf.harness import Measurement, Settings, SwitchUnderTest
from perf.ratesearch import MAX_BACKLOG_FRACTION, MAX_LOSS, MIN_BACKLOG_S
from perf.switchml_job import WORKLOAD

CSV_FIELDS = ("kind", "program", "switch", "rep", "value", "unit", "offered_pps", "loss", "switch_cpu", "probes",
              "sender_limited", "note")
TITLES = {"basic_forward": "basic_forward (IPv4 LPM)", "agg64": "agg64 (64 × int32 into registers)",
          WORKLOAD: f"{WORKLOAD}.p4, 4-worker all-reduce"}


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
    """`switch` / `base` for one program: per repetition (both measured back to back) and their median."""

    program: str
    switch: str
    base: str
    per_rep: tuple[float, ...]

    @property
    def median(self) -> float | None:
        return statistics.median(self.per_rep) if self.per_rep else None


def medians(rows: list[Measurement]) -> dict[tuple[str, str], float | None]:
    """(program, switch) → median of its successful repetitions (None if none succeeded)."""
    values: dict[tuple[str, str], list[float]] = {}
    for m in rows:
        values.setdefault((m.program, m.switch), [])
        if m.value:
            values[(m.program, m.switch)].append(m.value)
    return {k: statistics.median(v) if v else None for k, v in values.items()}


def ratio(rows: list[Measurement], program: str, switch: str, base: str) -> Ratio:
    """switch / base per repetition where both produced a figure."""
    by = {(m.switch, m.rep): m.value for m in rows if m.program == program}
    reps = sorted({m.rep for m in rows if m.program == program})
    per = tuple(by[(switch, r)] / by[(base, r)] for r in reps if by.get((switch, r)) and by.get((base, r)))
    return Ratio(program, switch, base, per)


def ratios(report: Report) -> list[Ratio]:
    """The first switch (always the embedded one) over every other, per program: embedded / X."""
    first = report.switches[0].name
    programs = list(dict.fromkeys(m.program for m in report.rows))
    return [ratio(report.rows, prog, first, sut.name) for prog in programs for sut in report.switches[1:]]


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.1f} kpps" if unit == "frames/s" else f"{value:,.0f} elem/s"


def write_csv(report: Report, path: Path) -> None:
    """One row per measurement, per median, per ratio and per engine mode."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for m in report.rows:
            w.writerow({"kind": "measurement", "program": m.program, "switch": m.switch, "rep": m.rep,
                        "value": "" if m.value is None else f"{m.value:.0f}", "unit": m.unit,
                        "offered_pps": "" if m.offered_pps is None else f"{m.offered_pps:.0f}",
                        "loss": "" if m.loss is None else f"{m.loss:.5f}",
                        "switch_cpu": "" if m.switch_cpu is None else f"{m.switch_cpu:.2f}", "probes": m.probes,
                        "sender_limited": int(m.sender_limited), "note": m.note})
        units = {(m.program, m.switch): m.unit for m in report.rows}
        for (prog, sw), v in medians(report.rows).items():
            w.writerow({"kind": "median", "program": prog, "switch": sw, "value": "" if v is None else f"{v:.0f}",
                        "unit": units[(prog, sw)]})
        for r in ratios(report):
            for i, v in enumerate(r.per_rep, 1):
                w.writerow({"kind": "ratio", "program": r.program, "switch": r.switch, "rep": i, "value": f"{v:.4f}",
                            "unit": f"{r.switch} / {r.base}"})
            w.writerow({"kind": "ratio", "program": r.program, "switch": r.switch, "rep": "median",
                        "value": "" if r.median is None else f"{r.median:.4f}", "unit": f"{r.switch} / {r.base}"})
        for e in report.engine:
            w.writerow({"kind": "engine", "program": e.program, "switch": "embedded", "rep": "median",
                        "value": f"{e.pps:.0f}", "unit": "frames/s", "switch_cpu": f"{e.cpu_share:.2f}",
                        "note": f"{e.mode}: {e.how}; {len(e.rates)} runs, {e.packets} frames"})


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
             "figures to compare across machines.", "", "## Machine", ""]
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
              f"- Programs compiled once by `{report.compiler}`; every switch gets the same JSON and P4Info over "
              "P4Runtime (SetForwardingPipelineConfig on a switch started with `--no-p4`), then the same table "
              "entries. Each switch is started with the same flags: `--device-id 1 --thrift-port P -i 1@… -i 2@… "
              "--no-p4 -- --grpc-server-addr 127.0.0.1:P`.",
              f"- {s.reps} repetition{'s' if s.reps != 1 else ''}, interleaved: rep 1 runs every switch in turn "
              f"({', '.join(names)}), then rep 2 starting with the next switch, and so on (which switch runs first "
              "rotates); a fresh switch process each time, on the same namespaces and veth pairs."
              + (" Before rep 1, an unreported warm-up round of the same (quarter-length probes, a quarter of the "
                 "job): without it the first switch run of a program measured low, whichever switch it was."
                 if s.warmup else "")]
    if programs & {"basic_forward", "agg64"}:
        lines.append(
            "- **basic_forward / agg64**: the switch's ports 1 and 2 are veth pairs to namespaces h1 and h2. A "
            "sender process in h1 offers 16 pre-built frames round-robin over AF_PACKET, paced at a target rate; "
            "a receiver process counts the results (basic_forward: two /32 routes, forwarded to h2; agg64: no "
            f"entries, the running sums reflected to h1). A probe offers one rate for {s.duration:g} s, then waits "
            "until results stop arriving. The figure is the delivered rate (frames received / time from the first "
            "send to the last result) of the highest probe with loss < "
            f"{100 * MAX_LOSS:g} % (loss = 1 − received / offered, frames the kernel refused counted as lost) whose "
            f"results stopped within max({MIN_BACKLOG_S:g} s, {100 * MAX_BACKLOG_FRACTION:g} % of the probe) after "
            f"the sender did (no queue building up in buffers), found by an exponential ramp from "
            f"{s.start_rate / 1000:g} kpps (×2), then "
            f"bisection until the passing and failing rates are within {100 * s.tolerance:g} %, at most "
            f"{s.max_probes} probes; a 2 kpps warm-up precedes each search. Sender, receiver and switch share the "
            "machine's CPUs: the figures include what the sender and receiver leave to the switch.")
    if WORKLOAD in programs:
        lines.append(
            "- **switchml**: p4src/switchml.p4 with one 4-worker job installed by the project's controller "
            "(controller.switchml: L2 entries, the job, its multicast group); four `python -m worker` processes, "
            f"one per namespace, all-reduce {s.size:,} float32 elements each (window 32, pool of 64 slots) after "
            "a start barrier, and every result is verified against the float64 reference. Figure: elements / the "
            "slowest worker's all-reduce time. *switch CPU* here: the switch's CPU seconds while the workers ran "
            "/ that all-reduce time.")
    lines += ["- **Ratios**: per repetition (the two switches measured back to back), then the median.",
              "- *switch CPU*: the switch process's CPU time / wall time while sending (1.0 = one core busy); near "
              "1.0 at the reported rate means the switch, not the sender, was the limit.",
              "", "## Results (absolute, this machine)", "",
              "| program | switch | median | per repetition | loss at that rate | switch CPU | probes | notes |",
              "|---|---|---:|---|---:|---:|---:|---|"]
    med = medians(report.rows)
    for m0 in report.rows:
        if m0.rep != 1:
            continue
        reps = [m for m in report.rows if m.program == m0.program and m.switch == m0.switch]
        per = ", ".join(_fmt(m.value, m.unit) for m in reps)
        losses = [m.loss for m in reps if m.loss is not None]
        loss = f"≤ {100 * max(losses):.3f} %" if losses else "–"
        cpus = [m.switch_cpu for m in reps if m.switch_cpu is not None]
        cpu = f"{statistics.median(cpus):.2f}" if cpus else "–"
        probes = "/".join(str(m.probes) for m in reps) if m0.unit == "frames/s" else "–"
        notes = "; ".join(dict.fromkeys(m.note for m in reps if m.note))
        lines.append(f"| {TITLES.get(m0.program, m0.program)} | {m0.switch} | **{_fmt(med[(m0.program, m0.switch)], m0.unit)}**"
                     f" | {per} | {loss} | {cpu} | {probes} | {notes} |")
    rs = ratios(report)
    if rs:
        lines += ["", "## Ratios (same machine, back to back)", "",
                  "| program | ratio | median | per repetition |", "|---|---|---:|---|"]
        for r in rs:
            lines.append(f"| {TITLES.get(r.program, r.program)} | {r.switch} / {r.base} | "
                         f"**{'–' if r.median is None else f'{r.median:.2f}'}** | "
                         f"{', '.join(f'{v:.2f}' for v in r.per_rep) or '–'} |")
    if report.engine:
        lines += ["", "## Embedded engine without I/O (absolute, this machine)", "",
                  "The embedded switch only: `V1Switch.process(1, frame)` in a loop over the same 16 frames "
                  "(**in-process**), and the switch's `PacketLoop` (receive a batch, one `drain`) over in-memory "
                  f"ports (**loop**); 5 runs of {s.engine_seconds / 5:g} s each, the median. *CPU* is this process's "
                  "CPU time / wall time (below 1.0: other processes took part of the CPU).", "",
                  "| program | mode | median kpps | min–max kpps | CPU | notes |", "|---|---|---:|---:|---:|---|"]
        for e in report.engine:
            lines.append(f"| {TITLES.get(e.program, e.program)} | {e.mode} | **{e.pps / 1000:.1f}** | "
                         f"{min(e.rates) / 1000:.1f}–{max(e.rates) / 1000:.1f} | {e.cpu_share:.2f} | {e.how} |")
    return "\n".join(lines) + "\n"


HISTORY_FIELDS = ("date", "commit", "cpu", "load_start", "load_end", "compiler", "program", "switch", "base", "rep",
                  "ratio")
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
                            "load_end": m.get("load average at end", ""), "compiler": report.compiler,
                            "program": r.program, "switch": r.switch, "base": r.base, "rep": i, "ratio": f"{v:.4f}"})
                added += 1
    return added


def write_report(report: Report, out: Path) -> None:
    """`out` (Markdown), the CSV next to it, and the run's ratios appended to switch-history.csv there."""
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path = out.with_suffix(".csv")
    write_csv(report, csv_path)
    out.write_text(markdown(report, csv_path.name))
    append_history(report, out.parent / f"{out.stem}-history.csv")
