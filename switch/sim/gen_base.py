"""Shared pieces of the code generator: the exceptions and helper functions generated code calls, hexstr parsing."""

from __future__ import annotations

from typing import Any, Callable

from switch.errors import LoadError

Emitter = Callable[..., list[str]]  # (codegen, JSON parameters, location) -> Python lines; architecture primitives


class PacketAbort(Exception):
    """Raised by generated code when a packet cannot go on (failed assert/assume); the packet is dropped."""


class ParserError(Exception):
    """Raised inside the generated parser; `code` is the P4 error value (from the JSON `errors`)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _six(i: int, n: int) -> int:
    """A header stack index, or n (the scratch entry) when out of range."""
    return i if 0 <= i < n else n


def _sat(v: int, w: int) -> int:
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return lo if v < lo else hi if v > hi else v


def _usat(v: int, w: int) -> int:
    hi = (1 << w) - 1
    return 0 if v < 0 else hi if v > hi else v


def _fmt(fmt: str, vals: tuple) -> str:
    """log_msg formatting: each "{}" takes the next value; other text is kept as is."""
    parts = fmt.split("{}")
    out = [parts[0]]
    for i, rest in enumerate(parts[1:]):
        out.append(str(vals[i]) if i < len(vals) else "{}")
        out.append(rest)
    return "".join(out)


def _noop(F: list, D: tuple) -> None:
    """The action of a table without a default entry."""





def _key_mask(mask: int, width: int) -> tuple[int, int, int]:
    """(mask, shift, key width) of a table key's static mask: a contiguous mask (a slice `f[hi:lo]`) is matched as a
    value of the slice's width, shifted down, as the control plane (P4Info) sees it; any other mask keeps the width."""
    mask &= (1 << width) - 1
    if mask == 0:
        return mask, 0, width
    shift = (mask & -mask).bit_length() - 1
    run = mask >> shift
    if run & (run + 1) == 0:
        return mask, shift, run.bit_length()
    return mask, 0, width


def _hex(v: Any, where: str) -> int:
    try:
        return int(v, 16) if isinstance(v, str) else int(v)
    except (TypeError, ValueError):
        raise LoadError(f"bad hexstr {v!r} in {where}") from None
