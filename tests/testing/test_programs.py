"""A test that needs a missing program skips, except under CI, where it fails: CI
installs every program, so it can never pass by skipping."""

import pytest

from support.programs import require_program


def test_a_missing_program_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-such-program-here is not available"):
        require_program("no-such-program-here")


def test_a_missing_program_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI every program the tests need"):
        require_program("no-such-program-here")


def test_a_present_program_is_found(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require_program("sh").endswith("/sh")
