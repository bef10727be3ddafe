"""Which switch and compiler binaries to run: the embedded ones, or real BMv2/p4c when installed.

TARGET=embedded runs `python -m switch` / `python -m compiler`; TARGET=bmv2 runs `simple_switch_grpc` /
`p4c-bm2-ss`. The default is bmv2 when `simple_switch_grpc` is on PATH, else embedded. Both take the same flags.
`Target.explain()` says which one was chosen and why (make run prints it).
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
        return cls.explain(name)[0]

    @classmethod
    def explain(cls, name: str | None = None) -> tuple[Target, str]:
        """(the target choose() picks, one line saying which switch that is and why)."""
        source = "--target" if name else "TARGET"
        name = name if name else os.environ.get("TARGET", "")
        found = shutil.which("simple_switch_grpc")
        if not name:
            if found:
                return cls.BMV2, (f"switch: real BMv2 ({found}), because simple_switch_grpc is on PATH "
                                  "(TARGET=embedded for the embedded switch)")
            return cls.EMBEDDED, ("switch: embedded (python -m switch), because simple_switch_grpc is not on PATH "
                                  "(TARGET=bmv2 runs real BMv2 where it is installed)")
        try:
            target = cls(name.lower())
        except ValueError:
            raise ValueError(f"unknown TARGET {name!r}: use 'embedded' or 'bmv2'") from None
        if target is cls.BMV2 and not found:
            raise ValueError("TARGET=bmv2 but simple_switch_grpc is not on PATH")
        what = f"real BMv2 ({found})" if target is cls.BMV2 else "embedded (python -m switch)"
        return target, f"switch: {what}, as {source}={target.value} asks"

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
