"""The test kit for plugin authors, as pytest ships ``pytester``.

Installed with pi-harness as the pytest plugin ``pi_testing`` (entry point ``pytest11``),
which gives tests the ``harness`` and ``recording_ui`` fixtures. Import the rest from here::

    from pi_core.testing import Reply, RecordingUI, run_command, assert_light_import

- :class:`ScriptedProvider`, :class:`Reply`, :func:`scripted_model`: a model that replays a
  script over the real provider event stream, with no network;
- :class:`RecordingUI`: answers dialogs from queues and records what plugins ask and show;
- :class:`HarnessMaker` (the ``harness`` fixture) and :func:`run_command`;
- :func:`trust_project`: save a project trust decision, as ``/trust`` does;
- :func:`assert_light_import`: loading a plugin must not import the loop, tools or asyncio;
- :class:`OtlpReceiver`: an OpenTelemetry collector in a thread, for tests of spans;
- ``@pytest.mark.requires("bwrap")``, :func:`require_program`: a test that needs a program
  skips where it is absent, and fails under ``CI=true``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: Each name and the module it comes from, imported on first use: the scripted model and
#: the recording UI work where pytest is not installed (the docs examples, a user's venv);
#: only the parts that skip or fail a test need pytest, and they import it when they run.
#: The imports under ``TYPE_CHECKING`` and ``__all__`` repeat it for type checkers and
#: linters; tests/core/test_public_api.py keeps the three equal.
_LAZY = {
    "HarnessMaker": "pi_core.testing.harness",
    "run_command": "pi_core.testing.harness",
    "HEAVY": "pi_core.testing.imports",
    "assert_light_import": "pi_core.testing.imports",
    "OtlpReceiver": "pi_core.testing.otlp",
    "require": "pi_core.testing.programs",
    "require_program": "pi_core.testing.programs",
    "Reply": "pi_core.testing.scripted",
    "ScriptedProvider": "pi_core.testing.scripted",
    "scripted_model": "pi_core.testing.scripted",
    "Dialog": "pi_core.testing.ui",
    "RecordingUI": "pi_core.testing.ui",
    "trust_project": "pi_core.testing.trust",
}

if TYPE_CHECKING:
    from pi_core.testing.harness import HarnessMaker, run_command
    from pi_core.testing.imports import HEAVY, assert_light_import
    from pi_core.testing.otlp import OtlpReceiver
    from pi_core.testing.programs import require, require_program
    from pi_core.testing.scripted import Reply, ScriptedProvider, scripted_model
    from pi_core.testing.trust import trust_project
    from pi_core.testing.ui import Dialog, RecordingUI

__all__ = [
    "HarnessMaker", "run_command", "HEAVY", "assert_light_import", "OtlpReceiver", "require",
    "require_program", "Reply", "ScriptedProvider", "scripted_model", "Dialog", "RecordingUI",
    "trust_project",
]

if not TYPE_CHECKING:  # hidden from type checkers, so that a misspelt name is an error there

    def __getattr__(name: str):
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module 'pi_core.testing' has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
