"""Starting `python -m worker` processes and collecting what they report: one command line and one collector for
every runner (`experiments.run` on Mininet hosts, `perf.switchml_job` in network namespaces)."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worker.stats import read_json_report

__all__ = ["WorkerOutcome", "collect", "worker_argv"]


def worker_argv(job: Path, rank: int, protocol: str, size: int, *, dtype: str = "float32", seed: int = 1,
                window: int | None = None, program_json: Path | None = None, barrier: Path | None = None,
                barrier_timeout: float = 60.0, delay_ms: float = 0.0, sparsity: float = 0.0,
                sparse_overlap: float = 0.0, extra: tuple[str, ...] | list[str] = ()) -> list[str]:
    """One rank's command line: verify its result and print the JSON report (`--verify --json`); `--sparsity` and
    `--sparse-overlap` only when non-zero."""
    return [sys.executable, "-m", "worker", "--job", str(job), "--rank", str(rank), "--protocol", protocol,
            "--size", str(size), *(["--delay-ms", f"{delay_ms:g}"] if delay_ms else []),
            *(["--sparsity", repr(float(sparsity))] if sparsity else []),
            *(["--sparse-overlap", repr(float(sparse_overlap))] if sparse_overlap else []),
            "--dtype", dtype, "--seed", str(seed), *(["--window", str(window)] if window is not None else []),
            "--verify", "--json", *(["--program-json", str(program_json)] if program_json else []),
            *(["--barrier", str(barrier), "--barrier-timeout", f"{barrier_timeout:g}"] if barrier else []), *extra]


@dataclass
class WorkerOutcome:
    """What one worker process reported."""

    rank: int
    exit_code: int | None
    report: dict[str, Any] = field(default_factory=dict)
    stderr: str = ""
    wall_s: float = 0.0
    stdout: str = ""

    @property
    def ok(self) -> bool:
        """Exited 0 and reported a verified result."""
        return self.exit_code == 0 and bool(self.report.get("ok")) and bool(self.report.get("verified", True))

    def error(self) -> str:
        """Why it is not ok, in one line for a table: its exit code and reported error (or its stderr)."""
        return f"rank {self.rank}: exit {self.exit_code}: {(self.report.get('error') or self.stderr or 'no output').strip()}"


def collect(rank: int, proc: subprocess.Popen[str], deadline: float, started: float,
            why_killed: str = "killed: the experiment's time bound expired") -> WorkerOutcome:
    """Wait for a worker until `deadline` (time.monotonic()), killing it then; its outcome."""
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += f"\n{why_killed}"
    return WorkerOutcome(rank, proc.returncode, read_json_report(out), err.strip()[-2000:], time.monotonic() - started,
                         out)
