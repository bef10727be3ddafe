"""switch: an embedded BMv2-compatible v1model software switch with a P4Runtime server.

A drop-in for `simple_switch_grpc`: it loads the BMv2 JSON that `p4c-bm2-ss` emits, serves P4Runtime, takes the same
flags and forwards the same bytes. Layers follow BMv2's split (core vs architecture vs runtime):

    switch.errors        LoadError; MatchError + MatchErrorCode, the one control-plane error vocabulary
    switch.sim           architecture-neutral engine: JSON loading (ordered init passes), JSON → Python code
                         generation, match tables, registers/counters, hash calculations, checksums
    switch.v1model       the v1model architecture: V1Switch (standard_metadata, after-ingress order, PRE multicast,
                         mirror sessions, resubmit/recirculate, egress FIFOs), v1model primitives
    switch.runtime       P4Runtime gRPC server (finsy's protobuf-6 stubs) translating to the engine API
    switch.ports         AF_PACKET, in-memory and pcap ports; the packet event loop
    switch.stf           p4c STF test runner (`python -m switch.stf PROG.json TEST.stf`)
    switch.trace         BMv2-style formatting of the per-packet trace (`--log-console`, `--log-file`)
    switch.__main__      CLI with simple_switch_grpc's flags (`python -m switch --help`)

Engine API (the contract every other layer codes against)
---------------------------------------------------------
    sw = V1Switch(drop_port=511, cpu_port=None, device_id=0, trace=None)   # from switch.v1model
    sw.load(json_text_or_dict)        # LoadError on anything unsupported/malformed; on failure the old program stays
    sw.loaded -> bool; sw.program_json -> dict (as loaded)
    sw.process(port, frame) -> [(port, frame), ...]   # synchronous: ingress, PRE/clone/resubmit/recirculate, egress
                                                        # FIFOs, until quiescent; frames for cpu_port included
    sw.receive(port, frame); sw.drain() -> [(port, frame)]   # the same in two steps (a batch, then egress)
    sw.lock                            # threading.RLock: callers (event loop, gRPC threads) hold it around calls

    sw.tables[name] -> MatchTable      # names exactly as in the JSON ("MyIngress.ipv4_lpm")
        .name .id .match_type .key: list[KeyField(name, match_type, bitwidth)] .action_names .max_size
        .with_counters .is_const (const entries) .default_is_const
        .insert(key, action, data, priority=0) -> Entry     # key: tuple, one item per key field:
        .modify(key, action, data, priority=0) -> Entry     #   exact int | lpm (value, prefix_len)
        .delete(key, priority=0)                            #   ternary (value, mask) | range (lo, hi)
        .lookup_entry(key, priority=0) -> Entry | None      #   optional (value, is_wildcard: bool)
        .entries -> list[Entry]                             # Entry: key, priority, action, data, packets, bytes
        .set_default(action, data); .reset_default(); .default -> (action, data)
        .clear()                                            # removes non-const entries, resets default
        .action_info(action) -> ActionInfo | None           # the table's action of that name (by its action ids)
        priority: P4Runtime convention, a higher number wins (JSON const entries are converted at load)
        values are masked to the field width as BMv2 does; the server validates PI-style before calling
    sw.actions[name] -> ActionInfo(name, id, params: list[(name, bitwidth)])
    sw.registers[name] -> RegisterArray: .size .bitwidth .read(i) .write(i, v) .reset()     # modulo width
    sw.counters[name]  -> CounterArray: .size .is_direct .table .read(i) -> (packets, bytes) .write(i, p, b) .reset()
    sw.pre.set_group(mgid, [(port, rid), ...]); .delete_group(mgid); .groups -> {mgid: [(port, rid)]}
    sw.mirror.set_session(sid, egress_port=None, mgid=None, truncate=0); .delete_session(sid); .sessions
    every refusal raises switch.errors.MatchError(code, message)
"""
