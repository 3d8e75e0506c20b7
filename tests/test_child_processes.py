"""Starting an embedded server on a port: a fixed one is checked, a picked one re-picked when
another process takes it first."""

from __future__ import annotations

import socket

import pytest

from leaderboard.child_processes import PortTakenError, start_on_port


class StartError(Exception):
    pass


def test_a_picked_port_taken_first_is_picked_again_up_to_three_times() -> None:
    tried: list[int] = []

    def launch(port: int) -> None:
        tried.append(port)
        if len(tried) < 3:
            raise PortTakenError(port)

    start_on_port("127.0.0.1", None, launch, name="srv", error=StartError)
    assert len(tried) == 3
    assert all(0 < p < 65536 for p in tried)


def test_a_port_taken_three_times_is_an_error_of_the_server() -> None:
    tried: list[int] = []

    def launch(port: int) -> None:
        tried.append(port)
        raise PortTakenError(port)

    with pytest.raises(StartError, match=r"port \d+ was taken by another process while srv"):
        start_on_port("127.0.0.1", None, launch, name="srv", error=StartError)
    assert len(tried) == 3


def test_a_fixed_port_in_use_is_refused_without_launching() -> None:
    tried: list[int] = []
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(StartError, match=f"port {port} is already in use"):
            start_on_port("127.0.0.1", port, tried.append, name="srv", error=StartError)
    assert tried == []
    start_on_port("127.0.0.1", port, tried.append, name="srv", error=StartError)
    assert tried == [port]
