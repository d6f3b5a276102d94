"""pi-harness's pytest plugin (entry point ``pytest11``): the test kit's fixtures and the
``requires`` mark (:mod:`pi_core.testing.programs`).

Loaded by every pytest run where pi-harness is installed, so it imports nothing of the
kit until a test asks for a fixture.
"""

from __future__ import annotations

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "requires(*programs): skip where a program is absent (fail under CI=true)")


def pytest_runtest_setup(item):
    marks = list(item.iter_markers("requires"))
    if marks:
        from pi_core.testing.programs import check_requirement

        for mark in marks:
            for name in mark.args:
                check_requirement(name)


@pytest.fixture
def harness(tmp_path):
    """Makes started harnesses over a scripted model in a temporary project
    (:class:`pi_core.testing.HarnessMaker`): ``h = await harness(plugin, script=[...])``."""
    from pi_core.testing.harness import HarnessMaker

    return HarnessMaker(tmp_path)


@pytest.fixture
def recording_ui():
    """A :class:`pi_core.testing.RecordingUI` with no queued answers."""
    from pi_core.testing.ui import RecordingUI

    return RecordingUI()
