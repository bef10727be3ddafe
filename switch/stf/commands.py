"""The STF commands as typed records; each carries the line it came from. Produced by `parser`, run by `runner`.

Names (tables, actions, key fields, registers, counters) are kept as written (quotes and `$N` stack indices already
normalised); they are resolved against the loaded program when the command runs. Values are kept as text because
their meaning depends on the key's match kind and width.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .packets import ExpectedPacket


class StfError(Exception):
    """A bad STF file or a command the switch refused; the message starts with `file:line:`."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source = source
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Check:
    """A comparison `<op> <value>` against a packet or byte count (or a register value)."""

    kind: str | None  # "packets", "bytes", or None (both, for check_counter; the value for register_read)
    op: str  # == != < <= > >=
    value: int

    def holds(self, actual: int) -> bool:
        return {
            "==": actual == self.value,
            "!=": actual != self.value,
            "<": actual < self.value,
            "<=": actual <= self.value,
            ">": actual > self.value,
            ">=": actual >= self.value,
        }[self.op]


@dataclass(frozen=True)
class Command:
    line: int


@dataclass(frozen=True)
class Packet(Command):
    """`packet <port> <hex>`: inject a frame."""

    port: int
    data: bytes


@dataclass(frozen=True)
class Expect(Command):
    """`expect <port> [<hex with *>[$]]`: the next frame out of `port` (no data: any number of frames is fine)."""

    port: int
    pattern: ExpectedPacket | None


@dataclass(frozen=True)
class NoPacket(Command):
    """`no_packet`: accepted and ignored, as bmv2stf does (unexpected packets fail the test at the end anyway)."""


@dataclass(frozen=True)
class Wait(Command):
    """`wait`: a synchronisation point; the embedded switch is synchronous, so nothing is pending."""


@dataclass(frozen=True)
class Add(Command):
    """`add <table> [<prio>] <field>:<value>... <action>(<param>:<value>, ...) [= <handle>]`."""

    table: str
    priority: int | None
    matches: tuple[tuple[str, str], ...]
    action: str
    args: tuple[tuple[str, str], ...]
    handle: str | None = None


@dataclass(frozen=True)
class SetDefault(Command):
    """`setdefault <table> <action>(<param>:<value>, ...)`."""

    table: str
    action: str
    args: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Remove(Command):
    """`remove all` (every non-const entry of every table) or `remove <table> [<prio>] <field>:<value>...`."""

    table: str | None
    priority: int | None = None
    matches: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CheckCounter(Command):
    """`check_counter <ctr>(<index> | $<handle>) [packets|bytes <op> <value>]`."""

    counter: str
    index: int | str  # an int index, or the name of an entry handle given by `add ... = <handle>`
    check: Check


@dataclass(frozen=True)
class Mirroring(Command):
    """`mirroring_add <sid> <port>`, `mirroring_add_mc <sid> <mgrp>`, `mirroring_delete <sid>`, `mirroring_get <sid>`."""

    verb: str
    session: int
    target: int | None = None


@dataclass(frozen=True)
class Multicast(Command):
    """simple_switch_CLI PRE commands: `mc_mgrp_create <g>`, `mc_mgrp_destroy <g>`, `mc_node_create <rid> <ports..>`,
    `mc_node_update <handle> <ports..>`, `mc_node_associate <g> <handle>`, `mc_node_dissociate <g> <handle>`,
    `mc_node_destroy <handle>`."""

    verb: str
    numbers: tuple[int, ...]
    ports: tuple[int, ...] = ()


@dataclass(frozen=True)
class RegisterOp(Command):
    """`register_read <reg> [<index>] [<op> <value>]`, `register_write <reg> <index> <value>`, `register_reset <reg>`.

    The trailing check on register_read is an extension (bmv2stf only prints the value)."""

    verb: str
    register: str
    index: int | None = None
    value: int | None = None
    check: Check | None = None


@dataclass(frozen=True)
class CounterOp(Command):
    """`counter_read <ctr> <index>`, `counter_write <ctr> <index> <packets> <bytes>`, `counter_reset <ctr>`."""

    verb: str
    counter: str
    index: int | None = None
    packets: int | None = None
    bytes: int | None = None


@dataclass(frozen=True)
class MeterOp(Command):
    """`meter_set_rates <meter> <index> <rate>:<burst> ...`, `meter_array_set_rates <meter> <rate>:<burst> ...`,
    `meter_get_rates <meter> <index>` (simple_switch_CLI's: rates in units per microsecond, committed first; a
    direct meter's index is its entry's handle)."""

    verb: str
    meter: str
    index: int | None = None
    rates: tuple[tuple[float, int], ...] = ()


@dataclass
class StfScript:
    """A parsed STF file: its commands in order and the name used in messages."""

    source: str
    commands: list[Command] = field(default_factory=list)

    @property
    def ports(self) -> set[int]:
        """Ports named by `packet` and `expect` lines: the interfaces bmv2stf opens, hence the ones it checks."""
        return {c.port for c in self.commands if isinstance(c, (Packet, Expect))}
