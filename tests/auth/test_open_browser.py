"""Opening the sign-in page: ``BROWSER`` is read at each sign-in, not once a process as
``webbrowser`` reads it, and the page opens without holding up the caller."""

import sys
import time

import pytest

from pi_plugins.browser import open_browser


def _browser(out, seconds=0.0) -> str:
    script = f"import sys, time; time.sleep({seconds}); open({str(out)!r}, 'w').write(sys.argv[1])"
    return f'{sys.executable} -c "{script}" %s'


def _wait_for(path, timeout=20.0) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        assert time.monotonic() < deadline, f"the browser command never wrote {path}"
        time.sleep(0.02)
    return path.read_text()


@pytest.mark.process
def test_the_browser_command_is_read_at_each_sign_in_not_once_a_process(tmp_path, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("PI_NO_BROWSER", raising=False)
    first, second = tmp_path / "first", tmp_path / "second"
    monkeypatch.setenv("BROWSER", _browser(first))
    assert open_browser("http://127.0.0.1:1/one")
    assert _wait_for(first) == "http://127.0.0.1:1/one"
    monkeypatch.setenv("BROWSER", _browser(second))  # as an SDK host or a later test sets it
    assert open_browser("http://127.0.0.1:1/two")
    assert _wait_for(second) == "http://127.0.0.1:1/two"
    assert first.read_text() == "http://127.0.0.1:1/one"


@pytest.mark.process
def test_a_browser_command_that_takes_its_time_does_not_hold_up_the_sign_in(tmp_path, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("PI_NO_BROWSER", raising=False)
    out = tmp_path / "opened"
    monkeypatch.setenv("BROWSER", _browser(out, seconds=3))
    started = time.monotonic()
    assert open_browser("http://127.0.0.1:1/slow")
    assert time.monotonic() - started < 1.5  # the caller's event loop serves the callback meanwhile
    assert _wait_for(out) == "http://127.0.0.1:1/slow"


def test_no_browser_is_tried_without_a_graphical_session(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert open_browser("http://127.0.0.1:1/none") is False
