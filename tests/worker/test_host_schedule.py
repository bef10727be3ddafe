"""The host baselines' steps as data (worker.host.schedule) and their sans-IO rank over byte streams
(worker.host.stream): the same algorithm as the blocking ranks, bit for bit, however the streams are cut."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.worker.test_baselines import run_all
from worker.host.base import HostCollective
from worker.host.peers import PeerProtocolError
from worker.host.ps import ShardedPS
from worker.host.ring import Ring
from worker.host.schedule import peers_of, ps_steps, ring_steps
from worker.host.stream import StreamRank
from worker.protocols import PROTOCOLS
from worker.verify import rank_input


def shuttle(cores: list[StreamRank], seed: int) -> None:
    """Deliver every rank's sends to their peers in random pieces and a random order until nothing moves."""
    rng = random.Random(seed)
    wire: list[tuple[int, int, bytes]] = []  # (from, to, bytes) in flight; one link stays in order
    for r, c in enumerate(cores):
        wire += [(r, p, d) for p, d in c.start()]
    while wire:
        link = wire[rng.randrange(len(wire))][:2]
        first = next(i for i, w in enumerate(wire) if w[:2] == link)  # a link delivers its oldest bytes first
        src, dst, data = wire[first]
        cut = rng.randint(1, max(1, len(data)))
        piece, rest = data[:cut], data[cut:]
        if rest:
            wire[first] = (src, dst, rest)
        else:
            wire.pop(first)
        wire += [(dst, p, d) for p, d in cores[dst].on_bytes(src, piece)]


@pytest.mark.parametrize("cls", [Ring, ShardedPS], ids=lambda c: c.name)
@pytest.mark.parametrize("n, size", [(2, 7), (3, 1000), (4, 4099), (5, 3)])
def test_a_stream_rank_gets_the_blocking_ranks_bits(cls: type[HostCollective], n: int, size: int) -> None:
    inputs = [rank_input(size, 9, r, "float32") for r in range(n)]
    blocking = run_all(cls, inputs)
    cores = [StreamRank.begin(cls.steps(r, n), r, n, inputs[r], "float32") for r in range(n)]
    shuttle(cores, seed=n * size)
    for r, c in enumerate(cores):
        assert c.done and c.flat.tobytes() == blocking[r].array.tobytes(), f"rank {r}"


def test_the_steps_are_the_algorithms() -> None:
    assert [(s.sends, s.recvs, s.add) for s in ring_steps(1, 3)] == [
        (((2, 1),), ((0, 0),), True), (((2, 0),), ((0, 2),), True),  # reduce-scatter
        (((2, 2),), ((0, 1),), False), (((2, 1),), ((0, 0),), False)]  # all-gather
    push, pull = ps_steps(1, 3)
    assert push.sends == ((0, 0), (2, 2)) and push.recvs == ((0, 1), (2, 1)) and push.add
    assert pull.sends == ((0, 1), (2, 1)) and pull.recvs == ((0, 0), (2, 2)) and not pull.add
    assert peers_of(ring_steps(0, 5)) == {1, 4} and peers_of(ps_steps(0, 4)) == {1, 2, 3}
    assert ring_steps(0, 1) == [] and ps_steps(0, 1) == []
    assert {name for name, s in PROTOCOLS.items() if s.host_steps is not None} >= {"ring", "ps"}


def test_a_stream_rank_refuses_a_peer_running_another_all_reduce() -> None:
    a = StreamRank.begin(ring_steps(0, 2), 0, 2, np.zeros(10, np.int32))
    b = StreamRank.begin(ring_steps(1, 2), 1, 2, np.zeros(11, np.int32))
    (_, header), = b.start()
    a.start()
    with pytest.raises(PeerProtocolError, match="disagree.*10 int32.*11 int32"):
        a.on_bytes(1, header)
