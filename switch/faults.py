"""Scripted, seeded fault injection at the switch's ports: a fault plan applied to every frame in and out.

A plan (JSON, `python -m switch --fault-plan FILE`) is a list of rules and events:

    {"seed": 7,
     "rules": [{"name": "lose the 2nd retransmission of rank 1",
                "direction": "in",                  # in (arriving at the switch) | out (leaving it) | any
                "ports": [2],                       # omit: every port
                "match": [{"offset": 42, "value": "01", "mask": "ff"}],   # bytes of the frame, all must match
                "nth": [2],                         # the k-th matching frames (1-based) ...
                "probability": 0.0,                 # ... or each matching frame with this probability
                "action": "drop",                   # drop | duplicate | delay | corrupt
                "delay": 3,                         # delay: released after 3 later frames on its port and direction
                "corrupt": {"offset": 60, "xor": "ff"}}],
     "events": [{"at_frame": 500, "reset_register": "MyIngress.bitmap", "first": 0, "count": 64}]}

A rule applies to a frame when the direction, the port and every byte match hold, and then to the k-th matching frames
(`nth`), or with `probability` (a draw from the plan's own seeded generator, one per matching frame), or to every
matching frame if neither is given. Every rule counts the frames it matches (its `nth` is the k-th of those,
whatever another rule did to them); the first rule that fires decides the frame's fate. A delayed frame is held and
released after `delay` later frames passed the same port in the same direction, or after `max_hold_s` (the switch's
loop wakes up for it), which reorders without losing. An event fires when the switch has received its `at_frame`-th
frame (counting from 1, before the frame is processed): a register range is zeroed as a control plane write would.
With no plan the switch behaves as BMv2. The same class runs inside the in-process soak harness, so a plan replays
the same fault sequence there and on a real port.
"""

from __future__ import annotations

import json
import random
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["FaultPlan", "FaultRule", "FaultEvent", "ByteMatch", "FaultPlanError", "ACTIONS", "DIRECTIONS",
           "rule_from_json"]

ACTIONS = ("drop", "duplicate", "delay", "corrupt")
DIRECTIONS = ("in", "out", "any")


class FaultPlanError(ValueError):
    """A fault plan that cannot be applied (the message names the rule and the field; `problem` is the message
    without where, for a plan compiler to say where in its own terms)."""

    def __init__(self, message: str, problem: str | None = None) -> None:
        super().__init__(message)
        self.problem = problem or message


def _hex(text: Any, where: str) -> bytes:
    if not isinstance(text, str):
        raise FaultPlanError(f"{where}: expected a hex string, got {text!r}")
    try:
        return bytes.fromhex(text.removeprefix("0x"))
    except ValueError:
        raise FaultPlanError(f"{where}: {text!r} is not hex") from None


@dataclass(frozen=True)
class ByteMatch:
    """frame[offset:offset+len(value)] & mask == value & mask."""

    offset: int
    value: bytes
    mask: bytes

    def __post_init__(self) -> None:
        if self.offset < 0 or not self.value or len(self.mask) != len(self.value):
            raise FaultPlanError(f"byte match at {self.offset}: value and mask must be non-empty and of equal length")

    def matches(self, frame: bytes) -> bool:
        end = self.offset + len(self.value)
        if len(frame) < end:
            return False
        return all(frame[self.offset + i] & m == v & m for i, (v, m) in enumerate(zip(self.value, self.mask)))

    def to_json(self) -> dict[str, Any]:
        return {"offset": self.offset, "value": self.value.hex(), "mask": self.mask.hex()}


@dataclass
class FaultRule:
    """One rule: which frames (direction, ports, bytes, nth/probability) and what happens to them."""

    action: str
    direction: str = "any"
    ports: frozenset[int] | None = None
    match: tuple[ByteMatch, ...] = ()
    nth: frozenset[int] | None = None
    probability: float | None = None
    delay: int = 1
    corrupt_offset: int = 0
    corrupt_xor: bytes = b"\xff"
    name: str = ""
    seen: int = field(default=0, init=False)
    """Matching frames so far."""
    fired: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise FaultPlanError(f"rule {self.name or self.action!r}: {problem}", problem)

    def _problem(self) -> str:
        if self.action not in ACTIONS:
            return f"action must be one of {', '.join(ACTIONS)}, got {self.action!r}"
        if self.direction not in DIRECTIONS:
            return f"direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}"
        if self.probability is not None and not 0.0 <= self.probability <= 1.0:
            return f"probability {self.probability} is not in [0, 1]"
        if self.nth is not None and self.probability is not None:
            return "give nth or probability, not both"
        if self.nth is not None and any(k < 1 for k in self.nth):
            return "nth counts from 1"
        if self.action == "delay" and self.delay < 1:
            return "delay must be >= 1 frame"
        if self.action == "corrupt" and (self.corrupt_offset < 0 or not self.corrupt_xor):
            return "corrupt needs an offset >= 0 and a non-empty xor"
        return ""

    def applies(self, direction: str, port: int, frame: bytes) -> bool:
        """Does the frame match (direction, port, bytes)? Counts it if so."""
        if self.direction != "any" and self.direction != direction:
            return False
        if self.ports is not None and port not in self.ports:
            return False
        if not all(m.matches(frame) for m in self.match):
            return False
        self.seen += 1
        return True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "direction": self.direction}
        if self.name:
            out["name"] = self.name
        if self.ports is not None:
            out["ports"] = sorted(self.ports)
        if self.match:
            out["match"] = [m.to_json() for m in self.match]
        if self.nth is not None:
            out["nth"] = sorted(self.nth)
        if self.probability is not None:
            out["probability"] = self.probability
        if self.action == "delay":
            out["delay"] = self.delay
        if self.action == "corrupt":
            out["corrupt"] = {"offset": self.corrupt_offset, "xor": self.corrupt_xor.hex()}
        return out


@dataclass(frozen=True)
class FaultEvent:
    """Zero `count` cells of a register from `first` when the switch receives its `at_frame`-th frame."""

    at_frame: int
    register: str
    first: int = 0
    count: int | None = None
    """None: to the end of the register."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"at_frame": self.at_frame, "reset_register": self.register, "first": self.first}
        if self.count is not None:
            out["count"] = self.count
        return out


Frames = list[tuple[int, bytes]]


class FaultPlan:
    """Rules and events with their own seeded generator; `ingress`/`egress` turn a batch of (port, frame) into the
    frames that go on (dropped ones left out, duplicates and released delayed frames put in)."""

    def __init__(self, rules: Sequence[FaultRule] = (), events: Sequence[FaultEvent] = (), seed: int = 0,
                 max_hold_s: float = 0.05) -> None:
        self.rules = list(rules)
        self.events = sorted(events, key=lambda e: e.at_frame)
        self.seed = seed
        self.max_hold_s = max_hold_s
        self.rng = random.Random(seed)
        self.stats: Counter[str] = Counter()
        self.received = 0
        self._held: dict[tuple[str, int], deque[list[Any]]] = {}
        """(direction, port) -> [remaining frames to wait, deadline, frame] in arrival order."""
        self._next_event = 0
        self.on_fault: Callable[[str, str, int], None] | None = None
        """Called with (action, direction, port) whenever a rule fires (the switch's timeline)."""

    # -- building -------------------------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str | Path, default_seed: int = 0) -> FaultPlan:
        """A plan from its JSON form (a mapping, JSON text or a file path); without a "seed" of its own its
        generator is seeded with `default_seed` (the switch's --seed)."""
        if isinstance(data, Path) or (isinstance(data, str) and not data.lstrip().startswith("{")):
            try:
                data = json.loads(Path(data).read_text())
            except OSError as e:
                raise FaultPlanError(f"cannot read fault plan {data}: {e.strerror}") from None
            except json.JSONDecodeError as e:
                raise FaultPlanError(f"fault plan {data}: invalid JSON: {e}") from None
        elif isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as e:
                raise FaultPlanError(f"fault plan: invalid JSON: {e}") from None
        if not isinstance(data, Mapping):
            raise FaultPlanError("fault plan: expected an object with 'rules' and 'events'")
        unknown = set(data) - {"seed", "rules", "events", "max_hold_s", "comment"}
        if unknown:
            raise FaultPlanError(f"fault plan: unknown keys {', '.join(sorted(unknown))}")
        rules = [rule_from_json(r, i) for i, r in enumerate(data.get("rules", []))]
        events = [_event(e, i) for i, e in enumerate(data.get("events", []))]
        return cls(rules, events, seed=int(data.get("seed", default_seed)),
                   max_hold_s=float(data.get("max_hold_s", 0.05)))

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "max_hold_s": self.max_hold_s, "rules": [r.to_json() for r in self.rules],
                "events": [e.to_json() for e in self.events]}

    def describe(self) -> str:
        """One line per rule and event, for the switch's log."""
        lines = [f"fault plan (seed {self.seed}): {len(self.rules)} rules, {len(self.events)} events"]
        lines += [f"  rule {i}: {json.dumps(r.to_json(), sort_keys=True)}" for i, r in enumerate(self.rules)]
        lines += [f"  event: {json.dumps(e.to_json(), sort_keys=True)}" for e in self.events]
        return "\n".join(lines)

    # -- applying -------------------------------------------------------------------------------------------------

    def ingress(self, batch: Iterable[tuple[int, bytes]], now: float,
                reset_register: Callable[[str, int, int | None], None] | None = None) -> Frames:
        """Frames arriving at the switch: faults applied, events fired in order (before their frame goes on)."""
        out: Frames = []
        for port, frame in batch:
            self.received += 1
            while self._next_event < len(self.events) and self.events[self._next_event].at_frame <= self.received:
                ev = self.events[self._next_event]
                self._next_event += 1
                if reset_register is not None:
                    reset_register(ev.register, ev.first, ev.count)
                    self.stats["register_resets"] += 1
            self._one("in", port, frame, now, out)
        return out

    def egress(self, batch: Iterable[tuple[int, bytes]], now: float) -> Frames:
        """Frames leaving the switch, faults applied."""
        out: Frames = []
        for port, frame in batch:
            self._one("out", port, frame, now, out)
        return out

    def release_expired(self, now: float) -> tuple[Frames, Frames]:
        """Delayed frames held longer than max_hold_s: (arriving, leaving)."""
        arriving: Frames = []
        leaving: Frames = []
        for (direction, port), q in self._held.items():
            while q and q[0][1] <= now:
                _, _, frame = q.popleft()
                (arriving if direction == "in" else leaving).append((port, frame))
        return arriving, leaving

    def next_release(self) -> float | None:
        """When the oldest held frame must go (None: nothing held)."""
        deadlines = [q[0][1] for q in self._held.values() if q]
        return min(deadlines) if deadlines else None

    @property
    def held(self) -> int:
        return sum(len(q) for q in self._held.values())

    def _one(self, direction: str, port: int, frame: bytes, now: float, out: Frames) -> None:
        rule = None
        for r in self.rules:  # every rule counts its matching frames; the first that fires decides
            if r.applies(direction, port, frame) and rule is None and self._fires(r):
                rule = r
        if rule is None:
            out.append((port, frame))
        else:
            rule.fired += 1
            self.stats[rule.action] += 1
            if self.on_fault is not None:
                self.on_fault(rule.action, direction, port)
            if rule.action == "duplicate":
                out += [(port, frame), (port, frame)]
            elif rule.action == "corrupt":
                b = bytearray(frame)
                for i, x in enumerate(rule.corrupt_xor):
                    if rule.corrupt_offset + i < len(b):
                        b[rule.corrupt_offset + i] ^= x
                out.append((port, bytes(b)))
            elif rule.action == "delay":
                self._held.setdefault((direction, port), deque()).append([rule.delay + 1, now + self.max_hold_s,
                                                                          frame])
            # drop: nothing
        q = self._held.get((direction, port))
        if q:
            for item in q:
                item[0] -= 1
            while q and q[0][0] <= 0:
                out.append((port, q.popleft()[2]))

    def _fires(self, r: FaultRule) -> bool:
        if r.nth is not None:
            return r.seen in r.nth
        if r.probability is not None:
            return self.rng.random() < r.probability
        return True


def rule_from_json(d: Any, i: int) -> FaultRule:
    """Rule i of a plan's `rules` (FaultPlanError naming it)."""
    where = f"rules[{i}]"
    if not isinstance(d, Mapping):
        raise FaultPlanError(f"{where}: expected an object")
    unknown = set(d) - {"name", "action", "direction", "ports", "match", "nth", "probability", "delay", "corrupt"}
    if unknown:
        raise FaultPlanError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    try:
        match = tuple(ByteMatch(int(m["offset"]), _hex(m["value"], f"{where}.match"),
                                _hex(m.get("mask", "ff" * len(_hex(m["value"], where))), f"{where}.match"))
                      for m in d.get("match", []))
        corrupt = d.get("corrupt", {})
        nth = d.get("nth")
        return FaultRule(
            action=str(d.get("action", "")), direction=str(d.get("direction", "any")),
            ports=frozenset(int(p) for p in d["ports"]) if d.get("ports") is not None else None, match=match,
            nth=frozenset([nth] if isinstance(nth, int) else (int(k) for k in nth)) if nth is not None else None,
            probability=float(d["probability"]) if d.get("probability") is not None else None,
            delay=int(d.get("delay", 1)), corrupt_offset=int(corrupt.get("offset", 0)),
            corrupt_xor=_hex(corrupt.get("xor", "ff"), f"{where}.corrupt"), name=str(d.get("name", "")))
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, FaultPlanError):
            raise FaultPlanError(f"{where}: {e}", e.problem) from None
        raise FaultPlanError(f"{where}: {type(e).__name__}: {e}", f"{type(e).__name__}: {e}") from None


def _event(d: Any, i: int) -> FaultEvent:
    where = f"events[{i}]"
    if not isinstance(d, Mapping) or "at_frame" not in d or "reset_register" not in d:
        raise FaultPlanError(f"{where}: expected {{\"at_frame\": N, \"reset_register\": NAME, [\"first\", \"count\"]}}")
    try:
        ev = FaultEvent(int(d["at_frame"]), str(d["reset_register"]), int(d.get("first", 0)),
                        int(d["count"]) if d.get("count") is not None else None)
    except (TypeError, ValueError) as e:
        raise FaultPlanError(f"{where}: {e}") from None
    if ev.at_frame < 1 or ev.first < 0 or (ev.count is not None and ev.count < 0):
        raise FaultPlanError(f"{where}: at_frame >= 1, first >= 0, count >= 0")
    return ev
