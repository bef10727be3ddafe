"""controller: the P4Runtime control plane of the testbed, as a library and a CLI (`python -m controller`).

    controller.client     P4RuntimeClient: synchronous P4Runtime transport (arbitration, pipeline, Write, Read)
                          over finsy's entities and schema; ControllerError with per-update details
    controller.registers  register access: P4Runtime (embedded switch) or BMv2's Thrift runtime (real BMv2)
    controller.switchml   SwitchMLController: jobs, forwarding, drop simulator, counters, slot state of switchml.p4
    controller.cli        the CLI and interactive shell (`python -m controller --help`)
"""
