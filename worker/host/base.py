"""What the host-based all-reduce baselines share: `HostCollective`, the base of `ring.Ring` and `ps.ShardedPS`.

A host collective sums a float32 or int32 tensor over the ranks of a job with plain host-to-host traffic over
`PeerLinks` (TCP through the switch's L2 forwarding, or in-memory links in tests): float32 values are added as
float32 (no quantization: the error is that of float32 summation, `verify.float_sum_bound`), int32 values with
wrapping two's complement adds (exact, as the switch does). Each run starts with a 12-byte header to every peer (run
number, element count, dtype, ranks: `run_header`) so that ranks running different all-reduces fail with a clear
error instead of mis-summing. The algorithm is its `steps` (`schedule.Step`: what to send and receive, then add or
store), which this class runs over blocking sockets and the packet simulator over its TCP model
(`stream.StreamRank`).
"""

from __future__ import annotations

import struct
import time
from typing import Callable, ClassVar

import numpy as np

from worker.host.peers import HostStats, PeerLinks, PeerProtocolError
from worker.host.schedule import Chunks, Step, add_into, chunk_bounds, peers_of
from worker.stats import RunResult
from worker.verify import Verdict, verify_float_sum

__all__ = ["HostCollective", "add_into", "check_run_header", "chunk_bounds", "prepare", "run_header"]

_RUN = struct.Struct("!IIHH")  # run number, element count, dtype code, rank count
_DTYPES = {"float32": (1, np.float32), "int32": (2, np.int32)}


def prepare(array: np.ndarray, dtype: str | None = None) -> tuple[np.ndarray, str]:
    """(a private flat copy of array to reduce in place, its dtype: float32 or int32, default from the array)."""
    arr = np.asarray(array)
    mode = dtype or ("int32" if np.issubdtype(arr.dtype, np.integer) else "float32")
    if mode not in _DTYPES:
        raise ValueError(f"dtype must be float32 or int32, got {mode!r}")
    return np.array(arr, dtype=_DTYPES[mode][1]).ravel(), mode


def run_header(run: int, size: int, dtype: str, n: int) -> bytes:
    """The 12 bytes a rank sends every peer before all-reduce number `run` of `size` elements over n ranks."""
    return _RUN.pack(run, size, _DTYPES[dtype][0], n)


def check_run_header(rank: int, peer: int, mine: bytes, got: bytes) -> None:
    """PeerProtocolError unless peer's header `got` equals this rank's `mine` (see `run_header`)."""
    if bytes(got) == bytes(mine):
        return
    run, size, code, n = _RUN.unpack(mine)
    prun, psize, pcode, pn = _RUN.unpack(got)
    names = {c: d for d, (c, _) in _DTYPES.items()}
    raise PeerProtocolError(
        f"rank {rank} and rank {peer} disagree: this rank runs all-reduce #{run} of {size} "
        f"{names.get(code)} elements over {n} ranks, rank {peer} #{prun} of {psize} "
        f"{names.get(pcode, pcode)} over {pn} (every rank must run the same sequence of all-reduces)")


class HostCollective:
    """One rank of a host-based all-reduce; subclasses give their `steps`, run here over `self.links`."""

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
        flat, mode = prepare(arr, dtype)
        stats = HostStats(elements=flat.size)
        retx0 = self.links.tcp_retransmissions()
        sent0, bytes0 = self.links.stats.packets_sent, self.links.stats.bytes_sent
        start = self.clock()
        self._check_peers(flat.size, mode)
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
    def steps(rank: int, n: int) -> list[Step]:
        """The algorithm: rank's steps among n ranks (`schedule.Step`)."""
        raise NotImplementedError

    @classmethod
    def peers_needed(cls, rank: int, n: int) -> set[int]:
        """The ranks that rank exchanges data with (the links to open)."""
        return peers_of(cls.steps(rank, n))

    def _reduce(self, flat: np.ndarray) -> None:
        """Run the steps: each one's sends and receives at once, then its combination."""
        chunks = Chunks(flat, self.rank, self.n)
        for step in self.steps(self.rank, self.n):
            into = chunks.incoming(step)
            self.links.exchange(chunks.outgoing(step), [(p, memoryview(buf)) for p, buf in into])
            chunks.combine(step, into)

    def _check_peers(self, size: int, dtype: str) -> None:
        mine = run_header(self._runs, size, dtype, self.n)
        peers = sorted(self.peers_needed(self.rank, self.n))
        got = {p: bytearray(len(mine)) for p in peers}
        self.links.exchange([(p, mine) for p in peers], [(p, memoryview(got[p])) for p in peers])
        for p in peers:
            check_run_header(self.rank, p, mine, got[p])
