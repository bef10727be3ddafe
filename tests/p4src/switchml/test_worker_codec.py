"""The worker's packet codec (layout derived from the compiled JSON) and switchml.p4 agree on the wire format."""

from __future__ import annotations

from worker.switchml import header


def test_codec_payloads_are_aggregated_and_decoded(ina_factory):
    import numpy as np
    from scapy.layers.inet import UDP
    from scapy.layers.l2 import Ether

    ina = ina_factory(32, 8)
    codec = header.Codec.from_program_json(ina.program)
    assert codec.num_elems == 32
    w0, w1, w2 = (ina.worker(r) for r in range(3))
    ina.add_job(7, [w0, w1, w2], mgid=70)
    rng = np.random.default_rng(1)
    vectors = [rng.integers(-2**31, 2**31, size=32, dtype=np.int64).astype(np.int32) for _ in range(3)]
    out = []
    for w, v, exp in zip((w0, w1, w2), vectors, (130, 133, 131)):
        hdr = header.InaHeader(msg_type=header.MSG_DATA, job_id=7, pool_index=header.pool_index(5, 1),
                               packet_id=42, exponent=exp, flags=0, worker_rank=w.rank)
        out = ina.send(w, ina.data(w, 7, 0, 0, [], payload=codec.encode(hdr, v)))
    assert [port for port, _ in out] == [1, 2, 3]
    expected = ina.sums(*(v.tolist() for v in vectors))
    for (port, frame), w in zip(out, (w0, w1, w2)):
        udp = Ether(frame)[UDP]
        assert udp.dport == w.udp_port and udp.sport == header.INA_UDP_PORT
        result_hdr, values = codec.decode(bytes(udp.payload))
        assert result_hdr.msg_type == header.MSG_RESULT
        assert (result_hdr.job_id, result_hdr.pool_index, result_hdr.packet_id) == (7, header.pool_index(5, 1), 42)
        assert result_hdr.exponent == 133
        assert values.tolist() == expected
