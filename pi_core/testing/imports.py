"""Plugin discovery imports every installed plugin at start-up, even for ``pi --help``:
a plugin's module must load without the agent loop, the tools or asyncio (they are
imported on first use). ``assert_light_import`` checks that in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

#: What a plugin module must not import just by being loaded.
HEAVY = ("asyncio", "pi_core.loop", "pi_core.protocol.tools", "pi_core.protocol.events", "pi_core.protocol.messages",
         "pi_core.app.harness", "httpx", "httpcore")


def assert_light_import(module: str, heavy: tuple[str, ...] = HEAVY, *, also: tuple[str, ...] = ()) -> None:
    """Fail if importing ``module`` in a fresh interpreter loads any of ``heavy`` (or ``also``)."""
    names = tuple(heavy) + tuple(also)
    code = (f"import sys, importlib; importlib.import_module({module!r}); "
            f"print(' '.join(m for m in {names!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"importing {module} failed:\n{done.stderr}")
    loaded = done.stdout.split()
    if loaded:
        raise AssertionError(f"importing {module} also imports {', '.join(loaded)}; "
                             "import them where they are first used")
