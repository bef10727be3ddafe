"""The machine a measurement ran on, for the header of every report, and what /proc says of a process in it."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (platform.processor() where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as `uptime` prints them."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


REPO = Path(__file__).resolve().parents[1]


def commit(root: Path = REPO) -> str:
    """The checkout's commit, "<sha> (<date>)", and " with uncommitted changes" when tracked files outside results/
    differ from it (the figures a run writes are not changes to what made them); "an unknown commit" outside git."""
    def git(*args: str) -> str:
        r = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    sha = git("log", "-1", "--format=%h (%cs)") or "an unknown commit"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return sha + (" with uncommitted changes" if dirty else "")


def machine_info() -> dict[str, str]:
    """Date, commit, CPU model and logical CPU count, kernel, Python and the load average now (call
    `load_average()` again at the end of a run)."""
    return {
        "date (UTC)": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "commit": commit(),
        "CPU": f"{cpu_model()}, {os.cpu_count()} logical CPUs",
        "kernel": platform.release(),
        "Python": platform.python_version() + f" ({platform.python_implementation()})",
        "load average at start": load_average(),
    }


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far (0.0 once it is gone)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_peak_rss_kb(pid: int) -> int:
    """Peak resident set size of a process (VmHWM) in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise ValueError(f"/proc/{pid}/status has no VmHWM")
