"""The report of a scenario run: `summary.md` (machine, method, medians, ratios) and plots, from the runs' rows.

Only verified runs count. A point's time is the median over its repetitions of the slowest worker's all-reduce time,
shown with the min-max range. Ratios compare each in-network algorithm of the scenario with each host baseline, and
each later in-network algorithm with the first of the same series (facets), at every x value ("switchml / ring time at 8 workers, 64 MiB: 0.6x",
"omnireduce / switchml time at 4 workers, 90 %: 0.4x"). With a link rate the theory lines are the time
to move the data once at that rate per worker: 1x the tensor for in-network aggregation, 2(n-1)/n x for ring and
the sharded PS (header overheads left out).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import matplotlib

from worker.protocols import in_network

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402

from experiments.rows import Row  # noqa: E402
from experiments.scenario import Scenario  # noqa: E402
from perf.machine import machine_info  # noqa: E402
from topo.cpus import CpuLayout  # noqa: E402

__all__ = ["write_report", "summary_markdown", "theory_time_s", "IN_NETWORK"]

IN_NETWORK = in_network()
"""Algorithms that aggregate in the switch (each worker sends its tensor once)."""
_LABELS = {"size": "tensor size", "workers": "workers", "loss": "loss probability per port and direction",
           "straggler_ms": "straggler's extra compute time (ms)", "background_mbps": "background UDP flow (Mbit/s)",
           "sparsity": "fraction of all-zero 64-element blocks per worker",
           "overlap": "fraction of blocks whose zero/non-zero draw all workers share"}


def theory_time_s(protocol: str, size: int, workers: int, bw_mbps: float, itemsize: int = 4) -> float:
    """Time to move the data one worker must send at the link rate (no headers): 1x the tensor for in-network
    aggregation, 2(n-1)/n x for the host baselines."""
    factor = 1.0 if protocol in IN_NETWORK else 2 * (workers - 1) / workers
    return factor * size * itemsize * 8 / (bw_mbps * 1e6)


def _s(seconds: float, decimals: int = 4) -> str:
    """Seconds with `decimals` decimals, or as many significant digits below a millisecond (simulated 100 Gbit/s
    runs)."""
    return f"{seconds:.{decimals}f}" if seconds >= 1e-3 or seconds == 0 else f"{seconds:.{decimals}g}"


def _fmt_x(axis: str, v: float, itemsize: int = 4) -> str:
    if axis == "size":
        b = v * itemsize
        for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
            if b >= k:
                return f"{b / k:g} {unit}"
        return f"{b:g} B"
    if axis in ("loss", "sparsity", "overlap"):
        return f"{100 * v:g} %"
    return f"{v:g}"


def _facets(sc: Scenario) -> list[str]:
    """Swept axes other than x and workers: each combination of their values is a series of its own."""
    values = {"size": sc.sizes, "loss": sc.loss, "straggler_ms": sc.straggler_ms,
              "background_mbps": sc.background_mbps, "sparsity": sc.sparsity, "overlap": sc.overlap}
    return [a for a, v in values.items() if a != sc.x and len(v) > 1]


def _series(r: Row, sc: Scenario) -> str:
    """The series a row belongs to: its algorithm, plus the values of the other swept axes."""
    return " ".join([r.protocol] + [f"{a}={_fmt_x(a, r.value(a))}" for a in _facets(sc)])


def _groups(rows: list[Row], sc: Scenario) -> dict[tuple[int, float, str], list[Row]]:
    """Verified rows by (workers, x value, series)."""
    g: dict[tuple[int, float, str], list[Row]] = defaultdict(list)
    for r in rows:
        if r.verified:
            g[(_panel(r, sc), r.value(sc.x), _series(r, sc))].append(r)
    return g


def _panel(r: Row, sc: Scenario) -> int:
    """The worker count a row is shown with; 0 (one panel for all) when workers is the x axis."""
    return 0 if sc.x == "workers" else r.workers


def _panels(rows: list[Row], sc: Scenario) -> list[int]:
    return sorted({_panel(r, sc) for r in rows})


def _where(n: int, sc: Scenario, x: float) -> str:
    """Where a ratio was measured: "8 workers, 64 MiB", or "8 workers" when workers is the x axis."""
    return f"{int(x)} workers" if not n else f"{n} workers, {_fmt_x(sc.x, x)}"


def _all_series(rows: list[Row], sc: Scenario) -> list[str]:
    seen: dict[str, None] = {}
    for r in sorted(rows, key=lambda r: sc.protocols.index(r.protocol) if r.protocol in sc.protocols else 99):
        seen.setdefault(_series(r, sc), None)
    return list(seen)


def _bounds(rows: list[Row]) -> str:
    """"network 2/3, switch-cpu 1/3": the verdicts of a point's runs."""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r.bound or "unmeasured"] += 1
    return ", ".join(f"{k} {v}/{len(rows)}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def summary_markdown(sc: Scenario, rows: list[Row], machine: dict[str, str]) -> str:
    g = _groups(rows, sc)
    itemsize = 4
    xs = sorted({k[1] for k in g}) or sorted({r.value(sc.x) for r in rows})
    panels = _panels(rows, sc)
    lines = [f"# {sc.name}", ""]
    if sc.description:
        lines += [sc.description, ""]
    lines += ["## Machine", ""] + [f"- {k}: {v}" for k, v in machine.items()] + [""]
    ok = sum(r.verified for r in rows)
    lines += ["## Method", "",
              f"- {len(rows)} runs ({ok} verified): algorithms {', '.join(sc.protocols)}; workers {list(sc.workers)}; "
              f"sizes {[ _fmt_x('size', s) for s in sc.sizes]} of {sc.dtype}; loss {list(sc.loss)}; stragglers "
              f"{list(sc.straggler_ms)} ms; background {list(sc.background_mbps)} Mbit/s; "
              + (f"sparsity {list(sc.sparsity)} (the fraction of 64-element blocks all zero in each worker's tensor); "
                 if any(sc.sparsity) else "")
              + (f"overlap {list(sc.overlap)} (the fraction of blocks whose zero/non-zero draw all workers share); "
                 if any(sc.overlap) else "")
              + f"{sc.repetitions} repetitions, interleaved."]
    lines += _sim_method(sc, rows) if sc.engine == "sim" else _mininet_method(sc)
    lines += ["## Median time (s), min–max over repetitions", ""]
    series = _all_series(rows, sc)
    first = [] if sc.x == "workers" else ["workers"]
    head = "| " + " | ".join(first + [_LABELS[sc.x]] + series) + " |"
    lines += [head, "|" + "---|" * (len(first) + 1 + len(series))]
    for n in panels:
        for x in xs:
            cells = []
            for a in series:
                t = [r.elapsed_s for r in g.get((n, x, a), [])]
                cells.append(f"{_s(statistics.median(t))} ({_s(min(t))}–{_s(max(t))})" if t else "—")
            if any(c != "—" for c in cells):
                lines.append("| " + " | ".join(([str(n)] if n else []) + [_fmt_x(sc.x, x)] + cells) + " |")
    ina = [a for a in series if a.split()[0] in IN_NETWORK]
    host = [a for a in series if a.split()[0] not in IN_NETWORK]
    if len(ina) + bool(host) > 1:
        lines += ["", "## Ratios (median time of network-bound runs, lower is faster for the first)", ""]
        apart: list[str] = []
        for n in panels:
            for x in xs:
                for a in ina:
                    ra = g.get((n, x, a), [])
                    others = [h for h in host if h.split()[1:] == a.split()[1:]]
                    first = next(b for b in ina if b.split()[1:] == a.split()[1:])
                    if first != a:
                        others.insert(0, first)
                    for b in others:
                        rb = g.get((n, x, b), [])
                        ta = [r.elapsed_s for r in ra if r.bound == "network"]
                        tb = [r.elapsed_s for r in rb if r.bound == "network"]
                        if ta and tb:
                            lines.append(f"- {a} / {b} time at {_where(n, sc, x)}: "
                                         f"{statistics.median(ta) / statistics.median(tb):.2f}×")
                        elif ra and rb:
                            all_t = statistics.median(r.elapsed_s for r in ra) / statistics.median(
                                r.elapsed_s for r in rb)
                            apart.append(f"- {a} / {b} at {_where(n, sc, x)}: {all_t:.2f}× over all runs, but "
                                         f"{a.split()[0]}'s were bound by {_bounds(ra)} and {b.split()[0]}'s by "
                                         f"{_bounds(rb)}")
        if apart:
            lines += ["", "## Not compared: points where a side was not network-bound", "",
                      "A ratio is a statement about the protocols only when the network set the pace on both sides "
                      "(experiments/bound.py: network, retransmissions, contended, switch-cpu, host-cpu, "
                      "transport, latency).",
                      ""] + apart
    if sc.bw_mbps and sc.x == "size":
        lines += ["", f"## Theory at {sc.bw_mbps:g} Mbit/s (data one worker sends, no headers)", ""]
        for n in panels:
            for a in series:
                big = max(xs)
                t = [r.elapsed_s for r in g.get((n, big, a), [])]
                th = theory_time_s(a.split()[0], int(big), n, sc.bw_mbps, itemsize)
                meas = f"measured {_s(statistics.median(t), 3)} s = {th / statistics.median(t):.0%} of it" if t else ""
                lines.append(f"- {a}, {n} workers, {_fmt_x('size', big)}: {_s(th, 3)} s; {meas}")
    failed = [r for r in rows if not r.verified]
    if failed:
        lines += ["", f"## Failed runs ({len(failed)})", ""]
        lines += [f"- {r.protocol} n={r.workers} {sc.x}={getattr(r, sc.x)} rep {r.rep}: {r.error or 'not verified'}"
                  for r in failed[:20]]
    dashed = ", dashed: theory at the link rate" if _draws_theory(sc) else ""
    dotted = " (dotted: the link rate in elements/s)" if sc.bw_mbps else ""
    lines += ["", f"Plots: `time.png` (median time, min–max bars{dashed}), `goodput.png`{dotted}.", ""]
    return "\n".join(lines)



def _recovery_clause(sc: Scenario) -> str:
    """The end of the Method's window line: the [recovery] section in words, when it changes a default."""
    said = sc.recovery.describe()
    return f"; loss recovery ([recovery]): {said}." if said else "."


def _mininet_method(sc: Scenario) -> list[str]:
    return [f"- Mininet star, one switch ({sc.target} target), links "
            + (f"{sc.bw_mbps:g} Mbit/s (htb)" if sc.bw_mbps else "unlimited (veth)")
            + (", calibrated to the switch (bw_mbps = \"auto\", experiments.calibrate; the lowest rate of: "
               + "; ".join(sc.calibration) + ")" if sc.calibration else "")
            + "; loss is the P4 drop simulator's, on every worker port in both directions.",
            f"- SwitchML's window: {sc.window or 'the pool'} slots"
            + (", at most rate x (min RTT + 5 ms) of them in flight (window_control = adaptive)"
               if sc.window_control == "adaptive" else ", every one in flight (window_control = fixed)")
            + _recovery_clause(sc),
            "- Time: the slowest worker's all-reduce time (workers start together through a barrier); a run counts "
            "only if every worker verified its result against the float64 reference (int32: exact).",
            f"- CPU layout `{sc.cpus}` (topo.cpus): {CpuLayout.plan(sc.cpus).describe()}. Switch and workers share "
            "this machine's CPUs: at high link rates the figures measure the emulator's CPU, not the network. "
            "Ratios from one run of this scenario are the meaningful figures.", ""]


def _sim_method(sc: Scenario, rows: list[Row]) -> list[str]:
    """The Method lines of a simulated scenario: the model, and what the simulation cost in wall time."""
    m = sc.sim
    buf = "unbounded queues" if m.buffer_kib is None else f"{m.buffer_kib:g} KiB drop-tail queues"
    ecn = f", ECN marking at {m.ecn_kib:g} KiB" if m.ecn_kib is not None else ""
    service = f"{m.service_ns:g} ns per packet" if m.service_ns else "line rate (no per-packet time, as an ASIC)"
    sim_rows = [r for r in rows if r.wall_s]
    wall = sum(r.wall_s or 0.0 for r in sim_rows)
    events = sum(r.sim_events for r in sim_rows)
    simulated = sum(r.elapsed_s for r in sim_rows)
    if sc.topology == "two-tier":
        up = f", uplinks {sc.uplink_mbps:g} Mbit/s" if sc.uplink_mbps is not None else ""
        where = (f"two tiers, {sc.racks} rack switches under the PS's rack switch ({sc.levels}-level aggregation{up}), "
                 "each switch running the protocol's P4 program")
        lossy = "every host-facing port of every switch"
    elif sc.topology == "leaf-spine":
        up = f", {sc.uplink_mbps:g} Mbit/s between switches" if sc.uplink_mbps is not None else ""
        where = (f"leaf-spine, {sc.racks} leaves and the PS's leaf under {sc.spines} spines (routes per destination; "
                 f"{sc.levels}-level aggregation{up}), each switch running the protocol's P4 program")
        lossy = "every host-facing port of every switch"
    else:
        where, lossy = "a star, one switch running the protocol's P4 program", "every switch port"
    return [f"- Packet simulator (topo.sim, virtual time on SimPy): {where} "
            f"on the embedded engine; links {sc.bw_mbps:g} Mbit/s, {m.delay_us:g} µs, {buf}{ecn}, "
            f"{m.overhead_bytes} B of wire overhead per frame"
            f"{', shaped by htb as in the emulator (no serialisation delay)' if m.shaper == 'htb' else ''}; "
            f"switch service time {service}; host cost "
            f"{m.host_cost_ns:g} ns per frame{_shared_cpus(m.host_cpus)}; compute {m.compute_ms:g} ms per step; "
            f"loss is the fault plan's drop rule at {lossy}, both directions.",
            f"- Simulated {simulated:.4f} s of all-reduces in {wall:.1f} s of wall time, {events} events "
            f"({events / wall / 1e3 if wall else 0:.0f} k/s); a run is deterministic given its seed (scenario seed + "
            "rep). Verdicts (experiments/bound.py) read the simulated links' and switch's busy shares: the "
            "bottleneck column of runs.csv names the busiest port.",
            f"- Window: {sc.window or 'the protocol default'} packets per worker"
            + (", at most rate x (min RTT + 5 ms) of them in flight (window_control = adaptive)"
               if sc.window_control == "adaptive" else ", every one in flight")
            + _recovery_clause(sc),
            "- Time: the slowest worker's all-reduce time, simulated (every worker starts at once, after its compute "
            "time); a run counts only if every worker's result verified (experiments.simulate.check_results: int32 "
            "exact on every element; float32 by the protocol's error model, on a sample of whole packets at large "
            "scale, as the failed-run messages say).", ""]

def _draws_theory(sc: Scenario) -> bool:
    """Whether time.png draws the link-rate theory lines (a size sweep on rate-limited links, one facet)."""
    return bool(sc.bw_mbps) and sc.x == "size" and not _facets(sc)


def plot(sc: Scenario, rows: list[Row], out: Path) -> list[Path]:
    g = _groups(rows, sc)
    panels = _panels(rows, sc)
    paths = []
    for metric, ylabel, fname in (("elapsed_s", "all-reduce time (s)", "time.png"),
                                  ("goodput_elems_per_s", "goodput (elements/s per worker)", "goodput.png")):
        fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
        for ax, n in zip(axes[0], panels):
            hollow_shown = False
            for a in _all_series(rows, sc):
                groups = sorted(((x, rs) for (wn, x, al), rs in g.items() if wn == n and al == a),
                                key=lambda xr: xr[0])
                pts = [(x, [getattr(r, metric) for r in rs]) for x, rs in groups]
                if not pts:
                    continue
                xv = [x * (4 if sc.x == "size" else 1) for x, _ in pts]
                med = [statistics.median(v) for _, v in pts]
                lo = [m - min(v) for m, (_, v) in zip(med, pts)]
                hi = [max(v) - m for m, (_, v) in zip(med, pts)]
                line = ax.errorbar(xv, med, yerr=[lo, hi], marker="o", capsize=3, label=a)
                # a point most of whose runs the network did not bind: hollow (experiments/bound.py)
                other = [(xx, m) for xx, m, (_, rs) in zip(xv, med, groups)
                         if sum(r.bound == "network" for r in rs) * 2 <= len(rs)]
                if other:
                    ax.plot([xx for xx, _ in other], [m for _, m in other], linestyle="none", marker="o",
                            markerfacecolor="white", markeredgecolor=line[0].get_color(), zorder=3,
                            label=None if hollow_shown else "hollow: not network-bound")
                    hollow_shown = True
                if metric == "elapsed_s" and _draws_theory(sc):
                    ax.plot(xv, [theory_time_s(a, int(x), n, sc.bw_mbps) for x, _ in pts], linestyle="--",
                            color=line[0].get_color(), alpha=0.6, label=f"{a} at link rate")
            ax.set_title(", ".join(([f"{n} workers"] if n else [])
                                   + ([f"{sc.bw_mbps:g} Mbit/s links"] if sc.bw_mbps else [])))
            if metric == "goodput_elems_per_s" and sc.bw_mbps:
                ax.axhline(sc.bw_mbps * 1e6 / 32, color="black", linestyle=":", linewidth=1,
                           label=f"link rate ({sc.bw_mbps:g} Mbit/s of 32-bit elements)")
            ax.set_xlabel(_LABELS[sc.x] + (" (bytes)" if sc.x == "size" else ""))
            ax.set_ylabel(ylabel)
            if sc.x == "size":
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
            else:  # a linear axis from 0, so that a small drop does not look like a collapse
                ax.set_ylim(bottom=0)
            ax.yaxis.set_major_formatter(EngFormatter(sep=""))
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"{sc.name}: median of {sc.repetitions}, bars min–max")
        fig.tight_layout()
        path = out / fname
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def write_report(sc: Scenario, rows: list[Row], out: Path, machine: dict[str, str] | None = None) -> str:
    """Write out/summary.md and the plots; return the summary."""
    text = summary_markdown(sc, rows, machine or machine_info())
    (out / "summary.md").write_text(text)
    plot(sc, rows, out)
    return text


def _shared_cpus(n: int | None) -> str:
    """The hosts' CPUs, when they share them."""
    return "" if n is None else f" on {n} shared CPU{'s' if n > 1 else ''}"
