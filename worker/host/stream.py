"""One rank of a host baseline over a byte stream per peer, without sockets: bytes in, bytes out.

The packet simulator's hosts (`topo.sim.hosts`) run it over their TCP model, as `base.HostCollective` runs the same
steps over blocking sockets: first the 12-byte run header to every peer (`base.run_header`, checked on receipt),
then each step (`schedule.Step`) — its sends handed out at once, its receives read one after another in the step's
order as the blocking rank's `PeerLinks.exchange` reads them (the peer being read drained as its bytes arrive, the
others left waiting), then its combination (`schedule.Chunks.combine`, the same code). Bytes not read yet wait in
the peer's inbox (its socket's receive buffer: `unread`, what the transport's receive window sees).

    core = StreamRank.begin(Ring.steps(r, n), r, n, array, "int32")
    out = core.start()                      # [(peer, bytes to send)]
    out = core.on_bytes(peer, data)         # more of peer's stream -> what to send next
    core.done, core.flat                    # the result when done
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from worker.host.base import check_run_header, prepare, run_header
from worker.host.schedule import Chunks, Step, peers_of

__all__ = ["StreamRank"]


class StreamRank:
    """A rank's steps over byte streams, sans-IO (see the module)."""

    def __init__(self, steps: Sequence[Step], rank: int, n: int, flat: np.ndarray, header: bytes) -> None:
        self.steps = list(steps)
        self.rank = rank
        self.chunks = Chunks(flat, rank, n)
        self.flat = flat
        self.header = header
        self.peers = sorted(peers_of(self.steps))
        self.inbox: dict[int, bytearray] = {p: bytearray() for p in self.peers}
        self.step = -2
        """-2 before start, -1 during the header exchange, then the index of the running step."""
        self._want: list[tuple[int, np.ndarray | bytearray]] = []
        self._got = 0  # receives of the step complete
        self._filled = 0  # bytes of the next one read
        self.done = False

    @classmethod
    def begin(cls, steps: Sequence[Step], rank: int, n: int, array: np.ndarray, dtype: str | None = None,
              run: int = 0) -> StreamRank:
        """All-reduce number `run` of array (a private copy, reduced in place) with these steps."""
        flat, mode = prepare(array, dtype)
        return cls(steps, rank, n, flat, run_header(run, flat.size, mode, n))

    def start(self) -> list[tuple[int, bytes]]:
        """The header to every peer (with no peers: done at once)."""
        self.step = -1
        self._want, self._got, self._filled = [(p, bytearray(len(self.header))) for p in self.peers], 0, 0
        return [(p, self.header) for p in self.peers] + self._advance()

    def on_bytes(self, peer: int, data: bytes) -> list[tuple[int, bytes]]:
        """The next bytes of peer's stream (before start too: they wait); returns what to send."""
        self.inbox[peer] += data
        return self._advance() if self.step >= -1 else []

    def unread(self, peer: int) -> int:
        """Bytes of peer's stream received but not read yet."""
        return len(self.inbox[peer])

    def _advance(self) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        while not self.done:
            while self._got < len(self._want):
                peer, buf = self._want[self._got]
                view = memoryview(buf).cast("B")
                box = self.inbox[peer]
                take = min(len(box), len(view) - self._filled)
                view[self._filled:self._filled + take] = box[:take]
                del box[:take]
                self._filled += take
                if self._filled < len(view):
                    return out
                self._got, self._filled = self._got + 1, 0
            if self.step == -1:
                for p, got in self._want:
                    check_run_header(self.rank, p, self.header, bytes(got))
            else:
                self.chunks.combine(self.steps[self.step], self._want)  # type: ignore[arg-type]
            self.step += 1
            if self.step == len(self.steps):
                self.done = True
                break
            step = self.steps[self.step]
            out += [(p, bytes(data)) for p, data in self.chunks.outgoing(step)]
            self._want, self._got, self._filled = list(self.chunks.incoming(step)), 0, 0
        return out
