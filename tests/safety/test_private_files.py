"""Session files are private: created 0600, in folders created 0700."""

import pytest
import stat

from support.llm_server import Reply


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.process
def test_pi_creates_its_session_file_0600_in_folders_0700(pi, server):
    server.push(Reply(text="The secret is safe."))
    out = pi.run("-p", "run env")
    assert out.returncode == 0, out.stderr
    [session] = pi.sessions()
    assert mode(session) == 0o600
    sessions_dir = pi.agent_dir / "sessions"
    assert session.parent.parent == sessions_dir
    assert mode(session.parent) == 0o700 and mode(sessions_dir) == 0o700
    for index in sessions_dir.rglob("*index*"):  # the listing's index says what sessions hold
        assert mode(index) == 0o600, index


def test_a_session_created_in_python_is_private_too(tmp_path):
    from pi_core.testing import Reply as ScriptedReply
    from support.agents import run
    from support.harnesses import make

    home = tmp_path / "new" / "home"  # none of it exists yet
    harness, *_ = make(home, [ScriptedReply(text="hi")])
    run(harness.prompt("hello"))
    assert harness.session.file.parent == home / "sessions"
    assert mode(harness.session.file) == 0o600
    assert [mode(d) for d in (tmp_path / "new", home, home / "sessions")] == [0o700] * 3
