"""Untraced per-packet fast paths of V1Switch, generated per loaded program.

`V1Switch._ingress` / `_egress` look up slots and options on every packet; here the same steps are generated as
straight-line Python with the slots, the drop port and the optional steps (timestamps, parser error field, checksum
verification, egress pipeline) resolved at load time. Only the common case runs here: a unicast packet without
clone, resubmit or recirculation. Whenever a packet needs anything else the generated code hands it to the generic
methods (`_ingress_tail`, `_egress_tail`, `_enqueue`, `_reenter`) at exactly the point where it diverged, so the
result is the same packet walk as `V1Switch._receive` + `_drain` (module docstring of switch.py).

Three functions, each returning None when it handed the packet (or its failure) to the generic code (which may
then have left work in the queues):

- `fast_process(port, frame)`: receive, ingress, enqueue on an empty queue and egress at once (what `process()` does
  when nothing else is queued); returns the transmitted (port, frame) pairs;
- `fast_receive(port, frame)`: receive, ingress and enqueue (`_enqueue` unless the queue exists and has room);
- `fast_egress(port, F, qdepth, depth)`: `_egress` of a dequeued packet; appends what it transmits to `sw._out`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from switch.sim.program import P_CLONE, P_EXIT, P_INLEN, P_LEARN, P_LEN, P_PAYLOAD, P_RECIRC, P_RESUBMIT, P_TRUNC

if TYPE_CHECKING:
    from switch.v1model.switch import V1Switch, _Loaded

RECIRC = 4  # instance_type of a recirculated packet (switch.py)
RELEASE = "POOL_MAX > len(POOL) and POOL.append(F)"  # V1Switch._release, one line


def _receive_lines(L: "_Loaded", drop_port: int, dropped: str) -> list[str]:
    """Body (indent 1) from the arrival of `frame` on `port` to a unicast packet `F` for `eport`; exits with
    `return None` when the generic code took over, `return <dropped>` when ingress dropped the packet."""
    out = [
        "sw._n_received += 1",
        "sw._packet_id += 1",
        "if POOL:",  # V1Switch._phv
        "    F = POOL.pop()",
        f"    F[:{L.m1}] = HEAD",
    ] + ([f"    {' = '.join(f'F[{s}]' for s in L.reuse_reset)} = 0"] if L.reuse_reset else []) + [
        "else:",
        "    F = TPL[:]",
        "if type(frame) is not bytes:",
        "    frame = bytes(frame)",
        "n = len(frame)",
        f"F[{P_PAYLOAD}] = frame",
        f"F[{P_LEN}] = F[{P_INLEN}] = n",
        f"F[{L.s_ingress_port}] = port & 0x1FF",
        f"F[{L.s_packet_length}] = n",
    ]
    if L.ts_ingress is not None:
        out.append(f"F[{L.ts_ingress}] = (sw.clock_ns() - sw._start_ns) // 1000")
    body = ["err = parse(F, frame)"]
    if L.s_parser_error is not None:
        body.append(f"F[{L.s_parser_error}] = err")
    body += [f"if err != {L.noerror}:", "    sw._stats['parser_errors'] += 1"]
    if L.has_verify:
        if L.s_checksum_error is not None:
            body += ["if not verify(F):", f"    F[{L.s_checksum_error}] = 1"]
        else:
            body.append("verify(F)")
    body += ["ingress(F)", f"F[{P_EXIT}] = 0"]
    special = f"F[{P_CLONE}] or F[{P_RESUBMIT}]"
    if L.prog.learn_lists:
        special += f" or F[{P_LEARN}]"
    if L.s_mcast_grp is not None:
        special += f" or F[{L.s_mcast_grp}]"
    body += [f"if {special}:",
             "    sw._ingress_tail(L, F, 0, frame)",
             "    return None",
             f"eport = F[{L.s_egress_spec}]",
             f"if eport == {drop_port}:",
             "    sw._n_dropped_ingress += 1",
             f"    {RELEASE}",
             f"    return {dropped}",
             f"F[{L.s_instance_type}] = 0"]
    out += ["try:"] + ["    " + b for b in body] + [
        "except Exception as exc:",
        "    sw._packet_failed(F, exc)",
        "    return None"]
    return out


def _egress_lines(L: "_Loaded", drop_port: int, qdepth: str, depth: str, dropped: str,
                  emit: list[str]) -> list[str]:
    """Body (indent 1) of the egress of `F` on `eport` (queue depth and loop depth as expressions); `emit` are the
    lines that hand over the transmitted `out`, `return <dropped>` ends a packet egress dropped."""
    body = []
    if L.egress_clock:
        body.append("now = (sw.clock_ns() - sw._start_ns) // 1000")
        if L.ts_egress is not None:
            body.append(f"F[{L.ts_egress}] = now")
        if L.deq_td is not None:
            body.append(f"F[{L.deq_td}] = (now - F[{L.ts_enq}]) & 0xFFFFFFFF")
    if L.s_deq_qdepth is not None:
        body.append(f"F[{L.s_deq_qdepth}] = {qdepth}")
    body += [f"F[{L.s_egress_port}] = eport",
             f"F[{L.s_egress_spec}] = {(drop_port + 1) & 0x1FF}",
             f"F[{L.s_packet_length}] = F[{P_LEN}] & 0xFFFFFFFF"]
    if not L.egress_empty:
        body += ["egress(F)", f"F[{P_EXIT}] = 0"]
    body += [f"if F[{P_CLONE}]:",
             f"    sw._egress_tail(L, eport, F, {depth})",
             "    return None",
             f"if F[{L.s_egress_spec}] == {drop_port}:",
             "    sw._n_dropped_egress += 1",
             f"    {RELEASE}",
             f"    return {dropped}",
             "out = deparse(F)",
             f"t = F[{P_TRUNC}]",
             "if t and t < len(out):",
             "    out = out[:t]",
             f"rc = F[{P_RECIRC}]",
             "if rc:",
             f"    sw._reenter(L, F, rc, {RECIRC}, out, {depth})",
             f"    {RELEASE}",
             "    return None",
             "sw._n_transmitted += 1",
             RELEASE] + emit
    return ["try:"] + ["    " + b for b in body] + [
        "except Exception as exc:",
        "    sw._packet_failed(F, exc)",
        "    return None"]


def _enqueue_lines(L: "_Loaded") -> list[str]:
    """Enqueue of `F` on the (empty) queue of `eport` and its immediate dequeue: priority check, timestamps."""
    out = []
    if L.s_priority is not None:
        out += [f"if F[{L.s_priority}] >= sw.priority_queues:",
                "    sw._enqueue(L, eport, F, 0)",  # drops it, counted as simple_switch does
                "    return None"]
    if L.ts_enq is not None:
        out.append(f"F[{L.ts_enq}] = ((sw.clock_ns() - sw._start_ns) // 1000) & 0xFFFFFFFF")
    if L.s_enq_qdepth is not None:
        out.append(f"F[{L.s_enq_qdepth}] = 0")
    return out


def _queue_lines(L: "_Loaded") -> list[str]:
    """`_enqueue` of `F` on `eport`: the generic method when the queue does not exist yet or the priority is out of
    range; a full queue first egresses its head packets (`V1Switch._enqueue` says why this is not simple_switch's
    drop). Failures are the packet's, as in `_receive`."""
    out = []
    if L.s_priority is not None:
        out += [f"if F[{L.s_priority}] >= sw.priority_queues:",
                "    sw._enqueue(L, eport, F, 0)",
                "    return True"]
    out += ["q = QUEUES.get(eport)",
            "cap = sw.queue_capacity",
            "if q is None or cap < 1:",
            "    sw._enqueue(L, eport, F, 0)",
            "    return True",
            "while len(q) >= cap:",
            "    sw._n_queue_full_waits += 1",
            "    ORDER.remove(eport)",
            "    G, d = q.popleft()",
            "    fast_egress(eport, G, len(q), d)"]
    if L.ts_enq is not None:
        out.append(f"F[{L.ts_enq}] = ((sw.clock_ns() - sw._start_ns) // 1000) & 0xFFFFFFFF")
    if L.s_enq_qdepth is not None:
        out.append(f"F[{L.s_enq_qdepth}] = len(q)")
    out += ["q.append((F, 0))", "ORDER.append(eport)", "return True"]
    return ["try:"] + ["    " + x for x in out] + ["except Exception as exc:",
                                                  "    sw._packet_failed(F, exc)",
                                                  "    return None"]


def build_fast_paths(sw: "V1Switch", L: "_Loaded") -> dict[str, Callable[..., Any]]:
    """The generated `process`, `receive` and `egress` of `L` on `sw` (see module docstring)."""
    drop = sw.drop_port
    src = ["def fast_process(port, frame):"] + ["    " + x for x in _receive_lines(L, drop, "[]") + _enqueue_lines(L)]
    src += ["    " + x for x in _egress_lines(L, drop, "0", "0", "[]", ["return [(eport, out)]"])]
    src += ["def fast_receive(port, frame):"] + ["    " + x for x in _receive_lines(L, drop, "True")]
    src += ["    " + x for x in _queue_lines(L)]
    src += ["def fast_egress(eport, F, qdepth, depth):"]
    src += ["    " + x for x in _egress_lines(L, drop, "qdepth", "depth", "True",
                                              ["sw._out.append((eport, out))", "return True"])]
    ns: dict[str, Any] = {"sw": sw, "L": L, "TPL": L.template, "parse": L.parse, "verify": L.verify,
                          "ingress": L.ingress, "egress": L.egress, "deparse": L.deparse,
                          "QUEUES": sw._queues, "ORDER": sw._order, "POOL": sw._phvs, "POOL_MAX": sw.phv_pool,
                          "HEAD": L.head, "__builtins__": __builtins__}
    exec(compile("\n".join(src) + "\n", "<v1switch fast path>", "exec"), ns)  # noqa: S102 - our own code
    return {k: ns["fast_" + k] for k in ("process", "receive", "egress")}
