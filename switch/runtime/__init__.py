"""switch.runtime: a P4Runtime gRPC server for V1Switch, behaving as simple_switch_grpc's PI server.

Uses finsy's protobuf-6 stubs (`finsy.proto`). Public API:

    server = P4RuntimeServer(sw, device_id=0, cpu_port=None, strict_bmv2=False, inject=None)
    port = server.start("127.0.0.1:9559")   # bound port (":0" picks a free one); raises RuntimeError if it cannot bind
    server.start(addr, tls=ServerTls.from_files(cert, key, cacert, client_auth=True))   # over TLS (mutual)
    server.packet_in(frame)                 # a frame the switch emitted on cpu_port → PacketIn to the primary (non-blocking)
    server.stop(grace=None)

    A PacketOut from the primary becomes frame = packed "packet_out" metadata + payload, passed to
    `inject(cpu_port, frame)`; with inject=None the frame is run through `sw.process` under `sw.lock`, CPU-port
    outputs go to `packet_in` and the rest is dropped (handy in tests). Without a cpu_port PacketOuts are dropped.

    strict_bmv2=True answers RegisterEntry reads/writes with UNIMPLEMENTED as PI does; otherwise registers are
    readable and writable (an extension). Capabilities reports "1.3.0", PI's version string.

Modules:
    server        gRPC servicer and server lifecycle; StreamChannel threads; PacketIn/PacketOut plumbing
    device        per-device P4Runtime state (pipeline, entry metadata, PRE state) and entity dispatch
    pipeline      Set/GetForwardingPipelineConfig payloads: raw or legacy-wrapped BMv2 JSON, P4Info ↔ JSON checks
    p4info        P4Info index by id and name, validated
    codec         bytestrings ↔ ints; match keys and action data ↔ the engine's tuples (PI's validation)
    tables        TableEntry and DirectCounterEntry writes/reads
    pre           MulticastGroupEntry and CloneSessionEntry
    externs       CounterEntry and RegisterEntry
    arbitration   client arbitration per (device id, role); primary election and notifications
    packetio      controller_packet_metadata ("packet_in"/"packet_out") bit packing
    status        P4RuntimeError, engine → gRPC code mapping, per-update error details (p4.v1.Error)
    tls           ServerTls: the server's TLS options (simple_switch_grpc's --grpc-server-ssl and friends)

Differences from PI worth knowing: requests naming another device id get NOT_FOUND (PI creates an empty device);
RECONCILE_AND_COMMIT is UNIMPLEMENTED; writes to tables with const entries get PERMISSION_DENIED (P4Runtime spec);
counter/register indices past the end get OUT_OF_RANGE; a bad device config gets INVALID_ARGUMENT with the load
error instead of PI's UNKNOWN; a VERIFY_AND_SAVE'd config takes effect (for Get, Write and packets) only at COMMIT.
As in PI, roles are not enforced: every stream competes for one primary per device, whatever its role name.
"""

from switch.runtime.server import P4RUNTIME_API_VERSION, P4RuntimeServer
from switch.runtime.tls import ServerTls

__all__ = ["P4RuntimeServer", "P4RUNTIME_API_VERSION", "ServerTls"]
