"""A test that needs a missing program skips, except under CI, where it fails: CI
installs every program, so it can never pass by skipping."""

import pytest

from pi_core.testing import require_program

pytest_plugins = ["pytester"]


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


@pytest.mark.process
def test_the_requires_mark_of_the_kit_skips_outside_ci_and_fails_under_it(pytester, monkeypatch):
    pytester.makepyfile('''
        import pytest

        @pytest.mark.requires("no-such-program-here")
        def test_needs_it():
            pass

        @pytest.mark.requires("sh")
        def test_has_it():
            pass
    ''')
    monkeypatch.delenv("CI", raising=False)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1, skipped=1)
    monkeypatch.setenv("CI", "true")
    # failing in setup, the test is an error, and the run fails
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1, errors=1)
