"""What the host-based all-reduce baselines share: `HostCollective`, the base of `ring.Ring` and `ps.ShardedPS`.

A host collective sums a float32 or int32 tensor over the ranks of a job with plain host-to-host traffic over
`PeerLinks` (TCP through the switch's L2 forwarding, or in-memory links in tests): float32 values are added as
float32 (no quantization: the error is that of float32 summation, `verify.float_sum_bound`), int32 values with
wrapping two's complement adds (exact, as the switch does). Each run starts with a 12-byte header to every peer (run
number, element count, dtype) so that ranks running different all-reduces fail with a clear error instead of
mis-summing. The tensor is cut into one chunk per rank: chunk k is elements [k*size//n, (k+1)*size//n).
"""

from __future__ import annotations

import struct
import time
from typing import Callable, ClassVar

import numpy as np

from worker.host.peers import HostStats, PeerLinks, PeerProtocolError
from worker.stats import RunResult
from worker.verify import Verdict, verify_float_sum

__all__ = ["HostCollective", "chunk_bounds"]

_RUN = struct.Struct("!IIHH")  # run number, element count, dtype code, rank count
_DTYPES = {"float32": (1, np.float32), "int32": (2, np.int32)}


def chunk_bounds(size: int, n: int) -> list[int]:
    """n+1 boundaries cutting size elements into n nearly equal chunks (chunk k = [b[k], b[k+1]))."""
    return [(k * size) // n for k in range(n + 1)]


class HostCollective:
    """One rank of a host-based all-reduce; subclasses implement `_reduce(flat)` over `self.links`."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def __init__(self, rank: int, num_ranks: int, links: PeerLinks, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 0 <= rank < num_ranks:
            raise ValueError(f"rank {rank} out of range for {num_ranks} ranks")
        self.rank = rank
        self.n = num_ranks
        self.links = links
        self.clock = clock
        self._runs = 0

    def run(self, array: np.ndarray, dtype: str | None = None) -> RunResult:
        """All-reduce array (float32 or int32; dtype default: from the array)."""
        arr = np.asarray(array)
        mode = dtype or ("int32" if np.issubdtype(arr.dtype, np.integer) else "float32")
        if mode not in _DTYPES:
            raise ValueError(f"dtype must be float32 or int32, got {mode!r}")
        code, np_type = _DTYPES[mode]
        flat = np.array(arr, dtype=np_type).ravel()  # a private copy, reduced in place
        stats = HostStats(elements=flat.size)
        retx0 = self.links.tcp_retransmissions()
        sent0, bytes0 = self.links.stats.packets_sent, self.links.stats.bytes_sent
        start = self.clock()
        self._check_peers(flat.size, code)
        if self.n > 1 and flat.size:
            self._reduce(flat)
        stats.elapsed = self.clock() - start
        stats.packets_sent = self.links.stats.packets_sent - sent0
        stats.bytes_sent = self.links.stats.bytes_sent - bytes0
        stats.retransmissions = self.links.tcp_retransmissions() - retx0
        self._runs += 1
        return RunResult(array=flat.reshape(arr.shape), stats=stats, exponents=None)

    @property
    def world_size(self) -> int:
        return self.n

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        return self.run(array).array

    def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Verdict:
        """Check a result against every rank's input: exact for int32, float32 summation's bound for float32."""
        return verify_float_sum(run.array, inputs, dtype)

    def close(self) -> None:
        self.links.close()

    def __enter__(self) -> HostCollective:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def peers_needed(rank: int, n: int) -> set[int]:
        """The ranks that rank exchanges data with (the links to open)."""
        raise NotImplementedError

    def _reduce(self, flat: np.ndarray) -> None:
        raise NotImplementedError

    def _check_peers(self, size: int, code: int) -> None:
        mine = _RUN.pack(self._runs, size, code, self.n)
        peers = sorted(self.peers_needed(self.rank, self.n))
        got = {p: bytearray(_RUN.size) for p in peers}
        self.links.exchange([(p, mine) for p in peers], [(p, memoryview(got[p])) for p in peers])
        for p in peers:
            run, psize, pcode, pn = _RUN.unpack(got[p])
            if (run, psize, pcode, pn) != (self._runs, size, code, self.n):
                names = {c: d for d, (c, _) in _DTYPES.items()}
                raise PeerProtocolError(
                    f"rank {self.rank} and rank {p} disagree: this rank runs all-reduce #{self._runs} of {size} "
                    f"{names.get(code)} elements over {self.n} ranks, rank {p} #{run} of {psize} "
                    f"{names.get(pcode, pcode)} over {pn} (every rank must run the same sequence of all-reduces)")


def add_into(dst: np.ndarray, src: np.ndarray) -> None:
    """dst += src element-wise: float32 adds, int32 two's complement wrapping adds (no overflow warning)."""
    if dst.dtype == np.int32:
        dst.view(np.uint32)[:] += src.view(np.uint32)
    else:
        np.add(dst, src, out=dst)
