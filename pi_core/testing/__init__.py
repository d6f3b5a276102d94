"""The test kit for plugin authors, as pytest ships ``pytester``.

Installed with pi-harness as the pytest plugin ``pi_testing`` (entry point ``pytest11``),
which gives tests the ``harness`` and ``recording_ui`` fixtures. Import the rest from here::

    from pi_core.testing import Reply, RecordingUI, run_command, assert_light_import

- :class:`ScriptedProvider`, :class:`Reply`, :func:`scripted_model`: a model that replays a
  script over the real provider event stream, with no network;
- :class:`RecordingUI`: answers dialogs from queues and records what plugins ask and show;
- :class:`HarnessMaker` (the ``harness`` fixture) and :func:`run_command`;
- :func:`assert_light_import`: loading a plugin must not import the loop, tools or asyncio;
- ``@pytest.mark.requires("bwrap")``, :func:`require_program`: a test that needs a program
  skips where it is absent, and fails under ``CI=true``.
"""

from __future__ import annotations

from pi_core.testing.harness import HarnessMaker, run_command
from pi_core.testing.imports import HEAVY, assert_light_import
from pi_core.testing.programs import require, require_program
from pi_core.testing.scripted import Reply, ScriptedProvider, scripted_model
from pi_core.testing.ui import Dialog, RecordingUI

__all__ = ["Dialog", "HEAVY", "HarnessMaker", "RecordingUI", "Reply", "ScriptedProvider",
           "assert_light_import", "require", "require_program", "run_command", "scripted_model"]
