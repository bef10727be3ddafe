"""sim: the architecture-neutral engine — BMv2 JSON in, compiled Python pipeline code out.

Modules:
    program       JSON validation and the flat PHV layout (slots per field, validity, stack index; packet registers)
    codegen       Codegen: drives generation of one Python module per program and compile()s it
    gen_base      exceptions and helpers the generated code calls (ParserError, PacketAbort, saturating casts, ...)
    gen_expr      expressions and field references → Python expressions
    gen_actions   actions and core primitives (assign, headers, stacks, registers, counters, hashes, log_msg, ...)
    gen_packet    parser states, deparser, calculations and checksums
    gen_pipeline  match tables (defaults, const entries) and the table / conditional node functions (traced code)
    gen_flow      untraced pipelines as one function: the control DAG back into nested if/else, const actions inlined
    optimize      AST peepholes on straight-line action code: PHV slots in locals, merged and hoisted bounds checks,
                  register windows as slices, forwarded temporaries
    tables        MatchTable (exact / lpm / ternary / range / optional), Entry, KeyField, ActionInfo
    externs       RegisterArray, CounterArray
    calculations  hash and checksum algorithms (crc16, crc32, csum16, xor16, identity)
"""
