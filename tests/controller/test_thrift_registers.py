"""controller.registers.ThriftRegisters against a stand-in of BMv2's Thrift runtime ("standard" service, multiplexed)
with BMv2's register semantics (behavioral-model src/bm_sim/context.cpp): register_write_range writes the cells
[start_index, end_index) and refuses an end past the array; reads and writes of one cell check the index."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.server import TThreadedServer
from thriftpy2.thrift import TMultiplexedProcessor, TProcessor
from thriftpy2.transport import TBufferedTransportFactory, TServerSocket

import controller.registers as registers
from controller.client import ControllerError
from controller.registers import ThriftRegisters

IDL = thriftpy2.load(str(Path(registers.__file__).with_name("bmv2_registers.thrift")), module_name="fake_bmv2_thrift")


class FakeBmv2:
    """The register calls of simple_switch's Thrift handler, on one register array `r` of 8 cells."""

    def __init__(self) -> None:
        self.cells = {"r": [0] * 8}

    def _array(self, name: str) -> list[int]:
        if name not in self.cells:
            raise IDL.InvalidRegisterOperation(code=IDL.RegisterOperationErrorCode.ERROR)
        return self.cells[name]

    def bm_register_read(self, cxt_id: int, name: str, idx: int) -> int:
        cells = self._array(name)
        if not 0 <= idx < len(cells):
            raise IDL.InvalidRegisterOperation(code=IDL.RegisterOperationErrorCode.INVALID_INDEX)
        return cells[idx]

    def bm_register_write(self, cxt_id: int, name: str, index: int, value: int) -> None:
        cells = self._array(name)
        if not 0 <= index < len(cells):
            raise IDL.InvalidRegisterOperation(code=IDL.RegisterOperationErrorCode.INVALID_INDEX)
        cells[index] = value

    def bm_register_write_range(self, cxt_id: int, name: str, start: int, end: int, value: int) -> None:
        cells = self._array(name)
        if end > len(cells) or start > end:  # context.cpp: `if (end > size() || start > end) return INVALID_INDEX`
            raise IDL.InvalidRegisterOperation(code=IDL.RegisterOperationErrorCode.INVALID_INDEX)
        for i in range(start, end):
            cells[i] = value

    def bm_register_reset(self, cxt_id: int, name: str) -> None:
        cells = self._array(name)
        cells[:] = [0] * len(cells)


@pytest.fixture
def bmv2() -> Iterator[tuple[FakeBmv2, int]]:
    fake = FakeBmv2()
    processor = TMultiplexedProcessor()
    processor.register_processor("standard", TProcessor(IDL.Standard, fake))
    sock = TServerSocket(host="127.0.0.1", port=0)
    server = TThreadedServer(processor, sock, iprot_factory=TBinaryProtocolFactory(),
                             itrans_factory=TBufferedTransportFactory())
    sock.listen()
    port = sock.sock.getsockname()[1]
    sock.listen = lambda: None  # already listening: serve() must not bind again
    threading.Thread(target=server.serve, daemon=True).start()
    yield fake, port
    server.close()


def test_fill_writes_exactly_count_cells(bmv2: tuple[FakeBmv2, int]) -> None:
    fake, port = bmv2
    regs = ThriftRegisters("127.0.0.1", port, timeout=2.0)
    regs.fill("r", 5, 3, 7)  # the last three cells: BMv2's end index is exclusive
    assert fake.cells["r"] == [0, 0, 0, 0, 0, 7, 7, 7]
    regs.fill("r", 0, 2, 1)
    assert regs.read_range("r", 0, 8) == [1, 1, 0, 0, 0, 7, 7, 7]
    regs.write("r", 3, 9)
    assert regs.read("r", 3) == 9


def test_out_of_range_is_refused_with_the_register_named(bmv2: tuple[FakeBmv2, int]) -> None:
    _, port = bmv2
    regs = ThriftRegisters("127.0.0.1", port, timeout=2.0)
    with pytest.raises(ControllerError, match="register_write_range r: BMv2 register error code 1"):
        regs.fill("r", 6, 3, 0)
    with pytest.raises(ControllerError, match="register_read r: BMv2 register error code 1"):
        regs.read("r", 8)
