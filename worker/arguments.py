"""What the command lines share: a parser whose errors are one line, and argument types that check a value's range
when it is parsed, before a command creates anything (a network, a switch, a file).

    p = Parser(prog="python -m experiments.run")
    p.add_argument("--size", type=at_least(1), ...)      # "--size: -5 is not an integer >= 1"
    p.add_argument("--loss", type=probability(below_one=True))
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

__all__ = ["Parser", "at_least", "in_range", "probability", "positive_float", "nonnegative_float", "port",
           "existing_file", "grpc_address", "fail"]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, `prog: error: message` (`-h` still prints the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (--help lists the options)\n")


def in_range(lo: int, hi: int | None = None, what: str = "an integer") -> Callable[[str], int]:
    """An integer in [lo, hi] (hi None: no upper bound)."""
    bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"

    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} {bound}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{value} is not {what} {bound}")
        return value

    parse.__name__ = "integer"
    return parse


def at_least(lo: int) -> Callable[[str], int]:
    """An integer >= lo."""
    return in_range(lo)


def _float(text: str, bound: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number {bound}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number {bound}")
    return value


def probability(*, below_one: bool = False) -> Callable[[str], float]:
    """A probability in [0, 1] (or [0, 1) where 1 would mean that nothing ever arrives)."""
    bound = "in [0, 1)" if below_one else "in [0, 1]"

    def parse(text: str) -> float:
        value = _float(text, bound)
        if value < 0 or value > 1 or (below_one and value == 1):
            raise argparse.ArgumentTypeError(f"{text} is not a probability {bound}")
        return value

    parse.__name__ = "probability"
    return parse


def positive_float(text: str) -> float:
    """A finite number > 0 (a rate, a duration)."""
    value = _float(text, "> 0")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number > 0")
    return value


def nonnegative_float(text: str) -> float:
    """A finite number >= 0."""
    value = _float(text, ">= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number >= 0")
    return value


def link_rate(*, zero: bool = False) -> Callable[[str], float | str]:
    """A link rate in Mbit/s (> 0, or >= 0 with `zero`: unlimited) or "auto" (calibrated to the switch and hosts)."""
    number = nonnegative_float if zero else positive_float

    def parse(text: str) -> float | str:
        return "auto" if text == "auto" else number(text)
    parse.__name__ = "link rate"
    return parse


port = in_range(1, 65535, "a port number")
"""A TCP/UDP port number."""


def existing_file(text: str) -> Path:
    """A path to a file that exists (read before anything starts)."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: {'is a directory' if path.is_dir() else 'no such file'}")
    return path


def grpc_address(text: str) -> str:
    """HOST:PORT of a gRPC server (an IPv4/IPv6 address or a host name, and a port number)."""
    host, sep, number = text.rpartition(":")
    if not sep or not host:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:9559)")
    try:
        port(number)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r}: the port is not an integer in [1, 65535]") from None
    bare = host.strip("[]")
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        if not all(part and (part.replace("-", "").isalnum()) for part in bare.split(".")):
            raise argparse.ArgumentTypeError(f"{host!r} in {text!r} is not a host name or address") from None
    return text


def fail(prog: str, message: str) -> int:
    """Print `prog: error: message` on one line; the exit status of a usage error (2)."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2
