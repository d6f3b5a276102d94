"""pi-harness's pytest plugin (entry point ``pytest11``): the test kit's fixtures.

Loaded by every pytest run where pi-harness is installed, so it imports nothing of the
kit until a test asks for a fixture.
"""

from __future__ import annotations

import pytest


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
