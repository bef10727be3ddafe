"""Which switch and compiler binaries to run: the embedded ones, or real BMv2/p4c when installed.

TARGET=embedded runs `python -m switch` / `python -m compiler`; TARGET=bmv2 runs `simple_switch_grpc` /
`p4c-bm2-ss`. The default is bmv2 when `simple_switch_grpc` is on PATH, else embedded. Both take the same flags.
"""

from __future__ import annotations

import enum
import os
import shutil
import sys


class Target(enum.Enum):
    """A switch target: the embedded Python switch or real BMv2."""

    EMBEDDED = "embedded"
    BMV2 = "bmv2"

    @classmethod
    def choose(cls, name: str | None = None) -> Target:
        """The target named by `name` or $TARGET; by default bmv2 if simple_switch_grpc is on PATH."""
        name = name if name is not None else os.environ.get("TARGET", "")
        if not name:
            return cls.BMV2 if shutil.which("simple_switch_grpc") else cls.EMBEDDED
        try:
            target = cls(name.lower())
        except ValueError:
            raise ValueError(f"unknown TARGET {name!r}: use 'embedded' or 'bmv2'") from None
        if target is cls.BMV2 and not shutil.which("simple_switch_grpc"):
            raise ValueError("TARGET=bmv2 but simple_switch_grpc is not on PATH")
        return target

    def switch_argv0(self) -> list[str]:
        """The command that starts a switch of this target (flags follow)."""
        if self is Target.BMV2:
            return ["simple_switch_grpc"]
        return [sys.executable, "-m", "switch"]

    def compiler_argv0(self) -> list[str]:
        """The command that compiles P4 for this target (p4c-bm2-ss flags follow)."""
        if self is Target.BMV2 and shutil.which("p4c-bm2-ss"):
            return ["p4c-bm2-ss"]
        return [sys.executable, "-m", "compiler"]
