"""STF text → `StfScript`: one command per line, `#` comments, blank lines, keywords in any case.

The accepted language is that of p4c's tools/stf/stf_parser.py plus the simple_switch_CLI pass-through commands of
backends/bmv2/bmv2stf.py (mirroring_*, mc_*, counter_*, register_*), with the leniencies real files rely on: spaces
inside packet hex, names in double quotes (P4Testgen writes them), `hdr.stack$0.f` for `hdr.stack[0].f`, spaces
around `:` `/` in keys. Every error names `file:line`; all errors of a file are reported at once.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import commands as c
from .packets import ExpectedPacket, parse_packet_data
from .values import BadValue, parse_int

_OPS = ("==", "!=", "<=", ">=", "<", ">")
_STACK_INDEX = re.compile(r"\$(\d+)")
_CHECK_COUNTER = re.compile(r"^(?P<name>\S+?)\s*\(\s*(?P<index>[^)]*?)\s*\)\s*(?P<rest>.*)$")
_KEY_GLUE = re.compile(r"\s*(:|/|&&&|->)\s*")
_METERS = ("meter_get_rates", "meter_set_rates", "meter_array_set_rates")


class StfSyntaxError(Exception):
    """All errors found while parsing one STF file."""

    def __init__(self, errors: list[c.StfError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors


def normalize_name(name: str) -> str:
    """A name as written → as looked up: quotes dropped, `stack$0` → `stack[0]`."""
    name = name.strip().strip('"')
    return _STACK_INDEX.sub(r"[\1]", name)


def _int(text: str, what: str) -> int:
    try:
        return parse_int(text)
    except BadValue as e:
        raise ValueError(f"bad {what}: {e}") from None


def _port(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"port must be a decimal number, got {text!r}")
    return int(text)


def _pairs(text: str, what: str) -> tuple[tuple[str, str], ...]:
    """`a:1, b:0x2` → (("a", "1"), ("b", "0x2"))."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition(":")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"{what} must be <name>:<value>, got {item!r}")
        out.append((normalize_name(name), value.strip()))
    return tuple(out)


def _keys(tokens: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for tok in tokens:
        name, sep, value = tok.partition(":")
        if not sep or not name or not value:
            raise ValueError(f"match key must be <field>:<value>, got {tok!r}")
        out.append((normalize_name(name), value))
    return tuple(out)


def _head_tokens(text: str) -> list[str]:
    """Whitespace tokens of a key region, with `f : v`, `v / 8`, `v &&& m` glued back together."""
    return _KEY_GLUE.sub(r"\1", text).split()


def _action_call(text: str) -> tuple[str, str, tuple[tuple[str, str], ...], str]:
    """Split `<head> <action>(<args>) <tail>` → (head, action, args, tail)."""
    open_ = text.find("(")
    if open_ < 0:
        raise ValueError("missing action call <action>(<param>:<value>, ...)")
    close = text.find(")", open_)
    if close < 0:
        raise ValueError("missing ')' after the action arguments")
    head = text[:open_].rstrip()
    parts = head.rsplit(None, 1)
    if not parts:
        raise ValueError("missing action name before '('")
    action = normalize_name(parts[-1])
    head = parts[0] if len(parts) == 2 else ""
    return head, action, _pairs(text[open_ + 1 : close], "action argument"), text[close + 1 :].strip()


def _priority_and_keys(tokens: list[str]) -> tuple[int | None, tuple[tuple[str, str], ...]]:
    priority = None
    if tokens and tokens[0].isdigit():
        priority = int(tokens.pop(0))
    return priority, _keys(tokens)


def _check(tokens: list[str], kinds: tuple[str, ...]) -> c.Check:
    kind = None
    if tokens and tokens[0].lower() in kinds:
        kind = tokens.pop(0).lower()
    if len(tokens) != 2 or tokens[0] not in _OPS:
        raise ValueError(f"expected [{'|'.join(kinds)}] <op> <value> with <op> one of {' '.join(_OPS)}")
    return c.Check(kind, tokens[0], _int(tokens[1], "value"))


def _ports(tokens: list[str]) -> tuple[int, ...]:
    if "|" in tokens:
        raise ValueError("LAG lists ('| <lags>') are not supported by the embedded switch")
    return tuple(_int(t, "port") for t in tokens)


def _nargs(verb: str, tokens: list[str], n: int, usage: str) -> None:
    if len(tokens) != n:
        raise ValueError(f"usage: {verb} {usage}")


def parse_line(text: str, line: int) -> c.Command | None:
    """One line → a command, or None for a blank/comment line. Raises ValueError with a message (no location)."""
    text = text.split("#", 1)[0].strip()
    if not text:
        return None
    verb, _, rest = text.replace("\t", " ").partition(" ")
    verb = verb.lower()
    rest = rest.strip()
    toks = rest.split()

    if verb == "packet":
        if len(toks) < 2:
            raise ValueError("usage: packet <port> <hex data>")
        return c.Packet(line, _port(toks[0]), parse_packet_data(rest[len(toks[0]) :]))
    if verb == "expect":
        if not toks:
            raise ValueError("usage: expect <port> [<hex data with * wildcards>[$]]")
        data = rest[len(toks[0]) :].strip()
        return c.Expect(line, _port(toks[0]), ExpectedPacket.parse(data) if data else None)
    if verb in ("no_packet", "wait"):
        if toks:
            raise ValueError(f"{verb} takes no arguments")
        return c.NoPacket(line) if verb == "no_packet" else c.Wait(line)
    if verb == "add":
        head, action, args, tail = _action_call(rest)
        handle = None
        if tail:
            m = re.match(r"^=\s*(\S+)$", tail)
            if not m:
                raise ValueError(f"unexpected text after the action call: {tail!r}")
            handle = m.group(1).lstrip("$")
        tokens = _head_tokens(head)
        if not tokens:
            raise ValueError("usage: add <table> [<priority>] <field>:<value>... <action>(<args>) [= <handle>]")
        table = normalize_name(tokens.pop(0))
        priority, keys = _priority_and_keys(tokens)
        return c.Add(line, table, priority, keys, action, args, handle)
    if verb == "setdefault":
        head, action, args, tail = _action_call(rest)
        tokens = head.split()
        if len(tokens) != 1 or tail:
            raise ValueError("usage: setdefault <table> <action>(<param>:<value>, ...)")
        return c.SetDefault(line, normalize_name(tokens[0]), action, args)
    if verb == "remove":
        if toks and toks[0].lower() == "all":
            if len(toks) != 1:
                raise ValueError("usage: remove all | remove <table> [<priority>] <field>:<value>...")
            return c.Remove(line, None)
        tokens = _head_tokens(rest)
        if not tokens:
            raise ValueError("usage: remove all | remove <table> [<priority>] <field>:<value>...")
        table = normalize_name(tokens.pop(0))
        priority, keys = _priority_and_keys(tokens)
        return c.Remove(line, table, priority, keys)
    if verb == "check_counter":
        m = _CHECK_COUNTER.match(rest)
        if not m:
            raise ValueError("usage: check_counter <counter>(<index>|$<handle>) [packets|bytes <op> <value>]")
        idx_text = m.group("index")
        if re.match(r"^\$?[A-Za-z_]\w*$", idx_text):
            index: int | str = idx_text.lstrip("$")
        else:
            index = _int(idx_text, "counter index")
        tokens = m.group("rest").split()
        check = _check(tokens, ("packets", "bytes")) if tokens else c.Check(None, "==", 0)
        return c.CheckCounter(line, normalize_name(m.group("name")), index, check)
    if verb in ("mirroring_add", "mirroring_add_mc"):
        _nargs(verb, toks, 2, "<session> " + ("<port>" if verb == "mirroring_add" else "<mgrp>"))
        return c.Mirroring(line, verb, _int(toks[0], "session id"), _int(toks[1], "port/group"))
    if verb in ("mirroring_delete", "mirroring_get"):
        _nargs(verb, toks, 1, "<session>")
        return c.Mirroring(line, verb, _int(toks[0], "session id"))
    if verb in ("mc_mgrp_create", "mc_mgrp_destroy", "mc_node_destroy"):
        _nargs(verb, toks, 1, "<handle>" if verb == "mc_node_destroy" else "<mgrp>")
        return c.Multicast(line, verb, (_int(toks[0], "number"),))
    if verb in ("mc_node_associate", "mc_node_dissociate"):
        _nargs(verb, toks, 2, "<mgrp> <node handle>")
        return c.Multicast(line, verb, (_int(toks[0], "group"), _int(toks[1], "node handle")))
    if verb in ("mc_node_create", "mc_node_update"):
        if not toks:
            raise ValueError(f"usage: {verb} {'<rid>' if verb == 'mc_node_create' else '<handle>'} <port>...")
        return c.Multicast(line, verb, (_int(toks[0], "number"),), _ports(toks[1:]))
    if verb == "register_read":
        if not toks:
            raise ValueError("usage: register_read <register> [<index>] [<op> <value>]")
        index = _int(toks[1], "index") if len(toks) > 1 else None
        check = _check(toks[2:], ()) if len(toks) > 2 else None
        return c.RegisterOp(line, verb, normalize_name(toks[0]), index, check=check)
    if verb == "register_write":
        _nargs(verb, toks, 3, "<register> <index> <value>")
        return c.RegisterOp(
            line, verb, normalize_name(toks[0]), _int(toks[1], "index"), _int(toks[2], "value")
        )
    if verb == "register_reset":
        _nargs(verb, toks, 1, "<register>")
        return c.RegisterOp(line, verb, normalize_name(toks[0]))
    if verb == "counter_read":
        _nargs(verb, toks, 2, "<counter> <index>")
        return c.CounterOp(line, verb, normalize_name(toks[0]), _int(toks[1], "index"))
    if verb == "counter_write":
        _nargs(verb, toks, 4, "<counter> <index> <packets> <bytes>")
        return c.CounterOp(
            line, verb, normalize_name(toks[0]), _int(toks[1], "index"), _int(toks[2], "packets"),
            _int(toks[3], "bytes"),
        )
    if verb == "counter_reset":
        _nargs(verb, toks, 1, "<counter>")
        return c.CounterOp(line, verb, normalize_name(toks[0]))
    if verb == "meter_get_rates":
        _nargs(verb, toks, 2, "<meter> <index>")
        return c.MeterOp(line, verb, normalize_name(toks[0]), _int(toks[1], "index"))
    if verb in _METERS:
        with_index = verb == "meter_set_rates"
        if len(toks) < 2 + with_index:
            raise ValueError(f"{verb}: usage: {verb} <meter>{' <index>' if with_index else ''} <rate>:<burst> ...")
        rates = []
        for tok in toks[1 + with_index:]:
            rate, sep, burst = tok.partition(":")
            try:
                rates.append((float(rate), _int(burst, "burst")))
            except ValueError:
                raise ValueError(f"{verb}: bad rate {tok!r} (expected <rate>:<burst>)") from None
            if not sep:
                raise ValueError(f"{verb}: bad rate {tok!r} (expected <rate>:<burst>)")
        return c.MeterOp(line, verb, normalize_name(toks[0]), _int(toks[1], "index") if with_index else None,
                         tuple(rates))
    raise ValueError(f"unknown STF command {verb!r}")


def parse_stf(text: str, source: str = "<stf>") -> c.StfScript:
    """Parse a whole STF text; raises StfSyntaxError listing every bad line."""
    script = c.StfScript(source)
    errors = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        try:
            cmd = parse_line(raw, lineno)
        except ValueError as e:
            errors.append(c.StfError(source, lineno, str(e)))
            continue
        if cmd is not None:
            script.commands.append(cmd)
    if errors:
        raise StfSyntaxError(errors)
    return script


def load_stf(stf: str | Path) -> c.StfScript:
    """Parse STF from a path (a Path, or a str naming an existing .stf file) or from STF text."""
    if isinstance(stf, Path) or ("\n" not in stf and stf.endswith(".stf")):
        path = Path(stf)
        return parse_stf(path.read_text(), str(path))
    return parse_stf(stf)
