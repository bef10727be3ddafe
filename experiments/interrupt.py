"""Ctrl-C during a study (`make experiment`, `make figures`, `make multitenant`, `make train`): stop cleanly, then say
how to resume.

    with stopping_cleanly():
        try:
            ...                                   # networks opened with `with`: a Ctrl-C tears them down
        except KeyboardInterrupt:
            return interrupted("experiments.sweep", argv, out, "3 of 8 runs recorded")   # prints, returns 130

The first SIGINT raises KeyboardInterrupt where the study is, and the context managers on its way out tear the
network down (topo.network.Network.close: the hosts' processes, the switch processes, the veths, MININET_LOCK). Any
later SIGINT only prints a note: a second Ctrl-C cannot cut that teardown short and leave half a network behind.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType

__all__ = ["INTERRUPTED", "MAKE_COMMAND", "interrupted", "resume_command", "stopping_cleanly"]

INTERRUPTED = 130
"""Exit status of a study stopped by Ctrl-C (128 + SIGINT, as a shell reports a process killed by it)."""
MAKE_COMMAND = "INA_MAKE_COMMAND"
"""Set by the Makefile to the make command that started the study (its target and command-line variables, RESUME=
left out), so that the resume hint can be that command."""


@contextlib.contextmanager
def stopping_cleanly() -> Iterator[None]:
    """While the block runs: the first SIGINT raises KeyboardInterrupt, later ones print a note and are ignored."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return

    def later(signum: int, frame: FrameType | None) -> None:
        print("interrupted again: still stopping cleanly (tearing the network down), please wait", file=sys.stderr,
              flush=True)

    def first(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, later)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def resume_command(module: str, argv: Sequence[str], out: Path) -> str:
    """The command that resumes the study into `out`: the make command that started it with RESUME=out, or else
    `python -m module` with its arguments (a --resume among them replaced)."""
    make = os.environ.get(MAKE_COMMAND, "").strip()
    if make:
        return f"{make} RESUME={shlex.quote(_shown(out))}"
    args, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--resume":
            skip = True
        elif not a.startswith("--resume="):
            args.append(a)
    python = os.path.relpath(sys.executable) if not sys.executable.startswith("/usr") else "python3"
    return shlex.join([python, "-m", module, *args, "--resume", _shown(out)])


def _shown(path: Path) -> str:
    """path relative to the working directory when inside it (results/size-sweep-…), else as it is."""
    return os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd()) else str(path)


def interrupted(module: str, argv: Sequence[str], out: Path, done: str) -> int:
    """Print what an interrupted study left in `out` (`done`: what was recorded, in words) and, last, how to
    resume it; INTERRUPTED."""
    print(f"\ninterrupted: {done} in {_shown(out)} (each written to disk as it finished; the run in progress is not "
          "recorded). The network is torn down.", file=sys.stderr)
    print(f"resume with: {resume_command(module, argv, out)}", file=sys.stderr, flush=True)
    return INTERRUPTED
