import fcntl

import pytest

from support.llm_server import llm_server  # noqa: F401  (the fixture)


@pytest.fixture
def callback_ports(tmp_path_factory):
    """The sign-ins' fixed callback ports (53692, 1455) for this test alone: the tests
    that listen on them take turns across xdist workers (a lock file they share)."""
    shared = tmp_path_factory.getbasetemp().parent / "pi-oauth-callback-ports.lock"
    with open(shared, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
        fcntl.flock(handle, fcntl.LOCK_UN)
