import fcntl
import socket
import time

import pytest

from support.llm_server import llm_server  # noqa: F401  (the fixture)

#: The sign-ins' fixed callback ports, as pi's (1456: Radius's): Claude's 53692 lies in Linux's ephemeral
#: range, so another test's connection may hold it for a moment.
CALLBACK_PORTS = (53692, 1455, 1456)


def _free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def callback_ports(tmp_path_factory):
    """The sign-ins' fixed callback ports for this test alone: the tests that listen on
    them take turns across xdist workers (a lock file they share), and start once all of
    them are free."""
    shared = tmp_path_factory.getbasetemp().parent / "pi-oauth-callback-ports.lock"
    with open(shared, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        deadline = time.monotonic() + 10
        while not all(_free(p) for p in CALLBACK_PORTS) and time.monotonic() < deadline:
            time.sleep(0.05)
        yield
        fcntl.flock(handle, fcntl.LOCK_UN)
