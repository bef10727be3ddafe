"""Register access for the controller: P4Runtime on the embedded switch, BMv2's Thrift runtime on real BMv2.

Real BMv2 (PI) answers UNIMPLEMENTED to P4Runtime RegisterEntry reads and writes, so `open_registers()` picks the
Thrift back end for TARGET=bmv2 (simple_switch_grpc's `--thrift-port`, the simple_switch_CLI protocol) and P4Runtime
for the embedded switch, behind one small interface.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

import finsy
import grpc

from controller.client import ControllerError, P4RuntimeClient

__all__ = ["Registers", "P4RuntimeRegisters", "ThriftRegisters", "open_registers"]

_IDL = Path(__file__).with_name("bmv2_registers.thrift")


class Registers(Protocol):
    """Read and write cells of a P4 register array by its (JSON/P4Info) name."""

    def read(self, name: str, index: int) -> int: ...
    def read_range(self, name: str, start: int, count: int) -> list[int]: ...
    def write(self, name: str, index: int, value: int) -> None: ...
    def fill(self, name: str, start: int, count: int, value: int) -> None: ...


class P4RuntimeRegisters:
    """Registers through P4Runtime RegisterEntry (the embedded switch's extension over real BMv2)."""

    def __init__(self, client: P4RuntimeClient) -> None:
        self.client = client

    def read(self, name: str, index: int) -> int:
        (entry,) = self.client.read(finsy.P4RegisterEntry(name, index=index))
        return int(entry.data)

    def read_range(self, name: str, start: int, count: int) -> list[int]:
        cells = {e.index: int(e.data) for e in self.client.read(finsy.P4RegisterEntry(name))}
        return [cells[i] for i in range(start, start + count)]

    def write(self, name: str, index: int, value: int) -> None:
        self.client.modify(finsy.P4RegisterEntry(name, index=index, data=value))

    def fill(self, name: str, start: int, count: int, value: int) -> None:
        self.client.write(("MODIFY", finsy.P4RegisterEntry(name, index=i, data=value))
                          for i in range(start, start + count))


class ThriftRegisters:
    """Registers through BMv2's Thrift runtime (service "standard"), as simple_switch_CLI reaches them."""

    CONNECT_WINDOW_S = 3.0
    """How long to keep retrying the connection (the switch may still be opening its Thrift port)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9090, timeout: float = 5.0, *,
                 connect_window_s: float | None = None) -> None:
        import thriftpy2
        from thriftpy2.protocol import TBinaryProtocolFactory, TMultiplexedProtocolFactory
        from thriftpy2.rpc import make_client

        idl = thriftpy2.load(str(_IDL), module_name="bmv2_registers_thrift")
        self._error = idl.InvalidRegisterOperation
        window = self.CONNECT_WINDOW_S if connect_window_s is None else connect_window_s
        deadline = time.monotonic() + window
        while True:
            try:
                self._client = make_client(
                    idl.Standard, host, port, timeout=timeout * 1000,
                    proto_factory=TMultiplexedProtocolFactory(TBinaryProtocolFactory(), "standard"))
                return
            except Exception as err:  # thriftpy2 raises TTransportException subclasses of several kinds
                if time.monotonic() >= deadline:
                    raise ControllerError(
                        f"cannot reach BMv2's Thrift runtime at {host}:{port} (tried for {window:g} s: {err}). "
                        "Registers of real BMv2 are only reachable over Thrift (PI answers UNIMPLEMENTED to P4Runtime "
                        "register access); this simple_switch_grpc may have been built without Thrift support: "
                        "`simple_switch_grpc --help` lists --thrift-port only when it has it (build BMv2 with "
                        "--with-thrift), and the switch must be started with that port") from None
                time.sleep(0.2)

    def _call(self, what: str, fn, *args):  # type: ignore[no-untyped-def]
        try:
            return fn(0, *args)
        except self._error as err:
            raise ControllerError(f"{what} {args[0]}: BMv2 register error code {err.code}") from None

    def read(self, name: str, index: int) -> int:
        return int(self._call("register_read", self._client.bm_register_read, name, index))

    def read_range(self, name: str, start: int, count: int) -> list[int]:
        return [self.read(name, i) for i in range(start, start + count)]

    def write(self, name: str, index: int, value: int) -> None:
        self._call("register_write", self._client.bm_register_write, name, index, value)

    def fill(self, name: str, start: int, count: int, value: int) -> None:
        # BMv2's register_write_range writes [start_index, end_index): the end is exclusive (bm_sim/context.cpp)
        self._call("register_write_range", self._client.bm_register_write_range, name, start, start + count, value)


def open_registers(client: P4RuntimeClient, *, bmv2: bool, thrift_port: int = 9090) -> Registers:
    """The register back end for the target: Thrift for real BMv2, P4Runtime for the embedded switch."""
    if bmv2:
        host = client.address.rsplit(":", 1)[0] or "127.0.0.1"
        return ThriftRegisters(host, thrift_port)
    return P4RuntimeRegisters(client)


class DetectedRegisters:
    """Register access chosen by asking the switch, on first use: P4Runtime when it serves RegisterEntry (the
    embedded switch), else BMv2's Thrift runtime on `thrift_port` (real BMv2 answers UNIMPLEMENTED), instead of
    guessing the switch from what is installed on this machine."""

    def __init__(self, client: P4RuntimeClient, thrift_port: int = 9090) -> None:
        self.client = client
        self.thrift_port = thrift_port
        self._chosen: Registers | None = None

    def chosen(self, name: str) -> Registers:
        if self._chosen is None:
            regs = P4RuntimeRegisters(self.client)
            try:
                regs.read(name, 0)
                self._chosen = regs
            except ControllerError as err:
                if err.code is not grpc.StatusCode.UNIMPLEMENTED:
                    raise
                self._chosen = open_registers(self.client, bmv2=True, thrift_port=self.thrift_port)
        return self._chosen

    def read(self, name: str, index: int) -> int:
        return self.chosen(name).read(name, index)

    def read_range(self, name: str, start: int, count: int) -> list[int]:
        return self.chosen(name).read_range(name, start, count)

    def write(self, name: str, index: int, value: int) -> None:
        self.chosen(name).write(name, index, value)

    def fill(self, name: str, start: int, count: int, value: int) -> None:
        self.chosen(name).fill(name, start, count, value)
