"""Results tables: the rows studies and benchmarks write, one CSV writer for all of them, and where a run writes.

    out = results_dir(ROOT / "results", "size-sweep")        # results/size-sweep-<UTC time>/, never an existing one
    write_rows(rows, out / "runs.csv")                        # dataclass rows, a column per field
    write_dicts(out / "history.csv", FIELDS, dicts)           # dict rows, the given columns
    log = CsvLog(out / "runs.csv", CSV_FIELDS); log.append(row.csv_row())   # appended as runs finish
"""

from __future__ import annotations

import csv
import datetime
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from controller.programs import CONTROLLERS
from experiments.result import ExperimentResult
from experiments.scenario import RunPoint, Scenario

__all__ = ["CSV_FIELDS", "SETUP_ATTEMPTS", "CsvLog", "Row", "agreed_digest", "from_csv", "results_dir", "to_csv",
           "write_dicts", "write_rows"]

T = TypeVar("T")

SETUP_ATTEMPTS = 3
"""Tries to bring a network up before its runs are recorded as failed (sweeps and benchmarks alike)."""


def write_dicts(path: Path, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """A CSV file with a header of `columns` and one line per row (keys beyond the columns are left out)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def to_csv(row: Any) -> dict[str, Any]:
    """A dataclass row as every runs.csv writes it: booleans as 1/0, None as empty."""
    return {k: int(v) if isinstance(v, bool) else "" if v is None else v for k, v in asdict(row).items()}


def from_csv(cls: type[T], d: Mapping[str, str], columns: Mapping[str, str] | None = None) -> T:
    """The dataclass row that `to_csv` wrote as `d`, each field by its declared type (int, float, bool as 1/0, str,
    or `X | None` with None as ""); `columns`: field -> column names that differ; a column `d` lacks (an older
    file) leaves its field's default."""
    def value(kind: str, text: str) -> object:
        if kind.endswith("| None"):
            return None if text == "" else value(kind.removesuffix("| None").strip(), text)
        return {"int": int, "float": float, "bool": lambda t: t in ("1", "True"), "str": str}[kind](text)
    names = columns or {}
    return cls(**{f.name: value(str(f.type), d[names.get(f.name, f.name)])  # type: ignore[call-arg]
                  for f in fields(cls) if names.get(f.name, f.name) in d})


def write_rows(rows: Sequence[Any], path: Path) -> None:
    """A CSV file with one line per dataclass row (columns: its fields, in order)."""
    if rows:
        write_dicts(path, [f.name for f in fields(rows[0])], (to_csv(r) for r in rows))
    else:
        path.write_text("")


class CsvLog:
    """A CSV file written a row at a time, so that a long sweep leaves what it measured even when stopped: the header
    and each row are on disk (flushed and fsync()ed) when the call returns, so a row survives a Ctrl-C, a killed
    process or a crash of the machine. `resume=True` appends to the file as it is (experiments.resume.reopen made it
    hold the rows a resume keeps)."""

    def __init__(self, path: Path, columns: Sequence[str], *, resume: bool = False) -> None:
        self.path, self.columns = path, list(columns)
        if not resume:
            self._write("w", lambda w: w.writeheader())
            _fsync_dir(path.parent)  # the new file's name, not only its bytes

    def append(self, row: Mapping[str, Any]) -> None:
        self._write("a", lambda w: w.writerow(row))  # one write() per row: an interruption leaves whole lines

    def _write(self, mode: str, put: Callable[[csv.DictWriter], object]) -> None:
        with open(self.path, mode, newline="") as f:
            put(csv.DictWriter(f, self.columns, extrasaction="ignore"))
            f.flush()
            os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def results_dir(root: Path, name: str, now: datetime.datetime | None = None) -> Path:
    """A new directory root/<name>-<UTC timestamp>[-k] (never one that exists)."""
    stamp = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y%m%d-%H%M%S")
    base = root / f"{name}-{stamp}"
    path, k = base, 1
    while True:
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            k += 1
            path = base.with_name(f"{base.name}-{k}")


@dataclass(frozen=True)
class Row(RunPoint):
    """One run: its point of the sweep and what it measured, as written to runs.csv (a run that did not happen keeps
    the measurement defaults and says why in `error`)."""

    rep: int = 0
    seed: int | None = None
    """The inputs' seed (the scenario's seed + rep)."""
    dtype: str = "float32"
    bw_mbps: float | None = None
    verified: bool = False
    elapsed_s: float = 0.0
    goodput_elems_per_s: float = 0.0
    link_utilisation: float | None = None
    retransmissions: int = 0
    wire_frames: int = 0
    wire_bytes: int = 0
    max_error_over_bound: float | None = None
    worker_cpu_s: float = 0.0
    switch_aggregated: int = 0
    link_busy_fraction: float | None = None
    switch_cpu_fraction: float | None = None
    host_cpu_fraction: float | None = None
    veth_drops: int = 0
    switch_wait_fraction: float | None = None
    host_wait_fraction: float | None = None
    outside_cpus: float | None = None
    retransmitted_fraction: float | None = None
    queue_drops: int = 0
    tcp_timeouts: int = 0
    efficiency: float | None = None
    bound: str = ""
    """What bound the run (experiments.bound.VERDICTS, in the rule's order); empty if it did not run."""
    engine: str = "mininet"
    """Where the run happened: "mininet" (real time) or "sim" (virtual time: elapsed_s is simulated)."""
    wall_s: float | None = None
    """A simulated run's wall-clock time (None for the emulator, whose elapsed_s is wall time)."""
    sim_events: int = 0
    """A simulated run's discrete events."""
    bottleneck: str = ""
    """A simulated run's busiest port and its busy share ("h3->s 98 %")."""
    result_digest: str = ""
    """`worker.verify.result_digest` of the ranks' result when every rank's is the same ("differs" if not): two
    engines' runs of one point and seed agree bit for bit when their digests do."""
    start_offsets_ms: str = ""
    """When each rank started its all-reduce, in ms after the earliest, in rank order (`;`-separated; a straggler's
    delay included): the emulator's workers leave the start barrier one after another. Empty in a simulation, where
    every worker starts at once unless told otherwise."""
    error: str = ""

    @classmethod
    def of(cls, point: RunPoint, rep: int, sc: Scenario, r: ExperimentResult) -> Row:
        reports = [w.report for w in r.workers]
        ratios = [float(x["max_error_over_bound"]) for x in reports if x.get("max_error_over_bound") is not None]
        errors = [f"rank {w.rank}: exit {w.exit_code}: {(w.report.get('error') or w.stderr or 'no output').strip()}"
                  for w in r.workers if not w.ok]
        return cls(**asdict(point), rep=rep, seed=sc.seed + rep, dtype=sc.dtype, bw_mbps=sc.bw_mbps,
                   verified=r.correct, elapsed_s=r.elapsed_s, goodput_elems_per_s=r.goodput if r.correct else 0.0,
                   link_utilisation=r.link_utilisation if r.correct else None,
                   retransmissions=r.retransmissions, wire_frames=r.wire[0], wire_bytes=r.wire[1],
                   max_error_over_bound=max(ratios) if ratios else None,
                   worker_cpu_s=sum(float(x.get("cpu_s", 0.0)) for x in reports),
                   switch_aggregated=r.counters.get(f"{CONTROLLERS[r.config.program].COUNTER_PREFIX}aggregated",
                                                    (0, 0))[0],
                   **_bound_columns(r), result_digest=agreed_digest(str(x.get("digest", "")) for x in reports),
                   start_offsets_ms=start_offsets(reports), error="; ".join(errors)[:500])

    def starts(self) -> list[float] | None:
        """`start_offsets_ms` in seconds, per rank (None if the run did not record them)."""
        return [float(v) / 1e3 for v in self.start_offsets_ms.split(";")] if self.start_offsets_ms else None

    @classmethod
    def failed(cls, point: RunPoint, rep: int, sc: Scenario, error: str) -> Row:
        return cls(**asdict(point), rep=rep, seed=sc.seed + rep, dtype=sc.dtype, bw_mbps=sc.bw_mbps,
                   error=error[:500])

    @classmethod
    def from_csv(cls, d: dict[str, str]) -> Row:
        """The row csv_row() wrote (each field converted by its declared type)."""
        return from_csv(cls, d, COLUMNS)

    def csv_row(self) -> dict[str, object]:
        d = asdict(self)
        d["verified"] = int(self.verified)
        d["size_bytes"] = self.size * DTYPE_BYTES[self.dtype]
        return {COLUMNS.get(k, k): ("" if v is None else v) for k, v in d.items()}


def start_offsets(reports: Sequence[Mapping[str, Any]]) -> str:
    """The ranks' start times (their reports' `started_s`, one monotonic clock) as `Row.start_offsets_ms`, in rank
    order; "" unless every rank reported one."""
    starts = {int(x["rank"]): float(x["started_s"]) for x in reports if "started_s" in x and "rank" in x}
    if not starts or len(starts) != len(reports):
        return ""
    first = min(starts.values())
    return ";".join(f"{(starts[r] - first) * 1e3:.3f}" for r in sorted(starts))


def agreed_digest(digests: Iterable[str]) -> str:
    """The digest every rank reported, "differs" if they disagree, "" if one is missing."""
    seen = set(digests)
    if not seen or "" in seen:
        return ""
    return seen.pop() if len(seen) == 1 else "differs"


def _bound_columns(r: ExperimentResult) -> dict[str, Any]:
    b = r.bound
    if b is None:
        return {}
    return {"link_busy_fraction": None if b.link_busy is None else round(b.link_busy, 4),
            "switch_cpu_fraction": round(b.switch_busy, 4), "host_cpu_fraction": round(b.host_busy, 4),
            "veth_drops": b.veth_drops, "switch_wait_fraction": round(b.switch_wait, 4),
            "host_wait_fraction": round(b.host_wait, 4), "outside_cpus": round(b.outside.cpus, 3),
            "retransmitted_fraction": round(b.retransmitted, 4), "queue_drops": b.queue_drops,
            "tcp_timeouts": b.tcp_timeouts, "efficiency": None if b.efficiency is None else round(b.efficiency, 4),
            "bound": b.verdict}


DTYPE_BYTES = {"float32": 4, "int32": 4}
COLUMNS = {"size": "size_elems"}
"""Row fields whose runs.csv column names say their unit."""
CSV_FIELDS = tuple(COLUMNS.get(f, f) for f in Row.__dataclass_fields__) + ("size_bytes",)
"""runs.csv's columns (docs/experiments.md, runs.csv, says what each means)."""
