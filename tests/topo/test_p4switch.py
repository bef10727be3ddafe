"""topo.P4Switch: startup failures quote the switch's own log (never "did not start correctly"); needs root."""

from __future__ import annotations

import socket
import time
from functools import partial
from pathlib import Path

import pytest
from mininet.net import Mininet

from topo.network import mininet_lock
from topo.p4switch import P4Switch
from topo.star import StarTopo
from topo.switchproc import SwitchStartError
from topo.target import Target

pytestmark = [pytest.mark.mininet, pytest.mark.timeout(120)]


def test_bad_program_fails_with_the_switch_log(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"__meta__": {"version": [9, 0]}}')
    with mininet_lock():  # Mininet's interface names are global: one network at a time on this machine
        net = Mininet(topo=StarTopo(1), controller=None, autoSetMacs=False,
                      switch=partial(P4Switch, target=Target.EMBEDDED, json_path=str(bad), log_dir=str(tmp_path),
                                     startup_timeout=20.0))
        started = time.monotonic()
        try:
            with pytest.raises(SwitchStartError) as err:
                net.start()
        finally:
            net.stop()
    assert time.monotonic() - started < 20
    message = str(err.value)
    assert "s1: switch exited with code" in message
    assert "version" in message.splitlines()[-1].lower(), message  # the switch's own last line names the problem


def test_a_port_already_served_is_refused_before_starting(tmp_path: Path) -> None:
    # a switch left over from an earlier run would otherwise pass the readiness check and receive the job
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        with mininet_lock():
            net = Mininet(topo=StarTopo(1), controller=None, autoSetMacs=False,
                          switch=partial(P4Switch, target=Target.EMBEDDED, log_dir=str(tmp_path), grpc_port=port))
            try:
                with pytest.raises(SwitchStartError, match=rf"s1: gRPC port {port} is already in use"):
                    net.start()
                assert net.switches[0].process is None  # nothing started
            finally:
                net.stop()


def test_switch_comes_up_and_reports_connected(tmp_path: Path) -> None:
    with mininet_lock():
        net = Mininet(topo=StarTopo(2), controller=None, autoSetMacs=False,
                      switch=partial(P4Switch, target=Target.EMBEDDED, log_dir=str(tmp_path), seed=42))
        try:
            net.start()
            sw = net.switches[0]
            assert sw.connected()
            assert sw.port_map() == {1: "s1-eth1", 2: "s1-eth2"}
            assert "-i 1@s1-eth1 -i 2@s1-eth2 --device-id 1" in " ".join(sw.argv())
            assert "Random seed 42 (replay with --seed 42)" in sw.log_path.read_text()  # make run SEED=42
            sw.target = Target.BMV2
            assert "--seed" not in sw.argv()  # simple_switch has no such flag
        finally:
            net.stop()
    assert not sw.connected()
