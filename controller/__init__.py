"""controller: the P4Runtime control plane of the testbed, as a library and a CLI (`python -m controller`).

    controller.client     P4RuntimeClient: synchronous P4Runtime transport (arbitration, pipeline, Write, Read)
                          over finsy's entities and schema; ControllerError with per-update details
    controller.tls        ClientTls: the CA a client trusts and the certificate it presents (--ssl-ca/--ssl-cert/
                          --ssl-key), and why a TLS handshake failed
    controller.local      LocalClient: the same writes and reads into an embedded switch in this process
    controller.registers  register access: P4Runtime (embedded switch) or BMv2's Thrift runtime (real BMv2)
    controller.base       ProgramController: what every program's controller shares (L2, drop simulator, per-job
                          counters, per-worker entries, its commands in the CLI); subclasses register per program
    controller.switchml   SwitchMLController: jobs, epochs, slot state of switchml.p4
    controller.atp        AtpController: job roles on one or two levels, the PS, ECN, aggregator state of atp.p4
    controller.programs   the controller of each program (plug-in protocols' included)
    controller.cli        the CLI and interactive shell (`python -m controller --help`)
"""
