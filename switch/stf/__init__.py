"""switch.stf: p4c's STF test language (Simple Test Framework) run against the embedded switch.

`python -m switch.stf PROG.json TEST.stf [-v] [--ignore-cli-errors]` behaves like p4c's backends/bmv2/bmv2stf.py
driving simple_switch: exit 0 and one summary line on success, 1 and a per-port nibble diff on a mismatch, 2 on bad
input (unloadable JSON, STF syntax error, a control-plane command the switch refuses — each with file:line).
From Python: `run_stf(switch_or_json, stf_text_or_path) -> StfResult`; in pytest: `testing.assert_stf(...)`.

Commands (one per line, `#` comments, keywords in any case; names may be suffixes of the JSON names, in quotes):
    packet <port> <hex>                       inject a frame (spaces anywhere in the hex)
    expect <port> [<hex with *>[$]]           next frame out of <port>; `*` any nibble, `$` exact length;
                                              no data: any number of frames on that port
    no_packet | wait                          accepted; no effect (the switch is synchronous)
    add <table> [<prio>] <field>:<v>... <action>(<param>:<v>, ...) [= <name>]
                                              v: 0x../0b../decimal; lpm `v/len` or `0x0a01****`; ternary `0x**12`
                                              or `v&&&m`; range `lo->hi`; higher <prio> wins
    setdefault <table> <action>(<param>:<v>, ...)
    remove all | remove <table> [<prio>] <field>:<v>...
    check_counter <ctr>(<index>|$<name>) [packets|bytes <op> <v>]     (no check: both == 0)
    counter_read <ctr> <i> | counter_write <ctr> <i> <pkts> <bytes> | counter_reset <ctr>
    register_read <reg> [<i>] [<op> <v>] | register_write <reg> <i> <v> | register_reset <reg>
    mc_mgrp_create <g> | mc_mgrp_destroy <g> | mc_node_create <rid> <port>... | mc_node_update <h> <port>...
    mc_node_associate <g> <h> | mc_node_dissociate <g> <h> | mc_node_destroy <h>
    mirroring_add <session> <port> | mirroring_add_mc <session> <g> | mirroring_delete <s> | mirroring_get <s>

Modules:
    values     STF numbers and match values (exact, ternary, LPM, range, optional) as bmv2stf reads them
    packets    packet data, expected-packet patterns, comparison and the hex diff
    commands   the commands as typed records (with line numbers), `StfScript`, `StfError`
    parser     STF text → StfScript (`parse_stf`, `load_stf`), all syntax errors with file:line
    control    control-plane commands on the engine API: name resolution, keys, priorities, entry handles,
               PRE nodes, mirroring, registers, counters
    runner     executes a script and judges the outputs like bmv2stf; `run_stf`, `StfResult`
    testing    pytest helpers: `assert_stf` (fails with the diff), `program_for` (`# program: NAME` lines)
    __main__   the command line
"""

from .commands import StfError, StfScript
from .parser import StfSyntaxError, load_stf, parse_stf
from .runner import StfResult, run_stf

__all__ = ["StfError", "StfResult", "StfScript", "StfSyntaxError", "load_stf", "parse_stf", "run_stf"]
