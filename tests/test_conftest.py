"""The suite's network guard (tests/conftest.py): remote names fail and are recorded."""

from __future__ import annotations

import socket

import pytest

from tests.conftest import NETWORK_ATTEMPTS


def test_remote_names_are_refused_and_recorded() -> None:
    with pytest.raises(socket.gaierror, match="tests run offline"):
        socket.getaddrinfo("github.com", 443)
    assert NETWORK_ATTEMPTS == ["github.com"]
    NETWORK_ATTEMPTS.clear()  # made on purpose here; any other would fail the test
    assert socket.getaddrinfo("localhost", 80)
