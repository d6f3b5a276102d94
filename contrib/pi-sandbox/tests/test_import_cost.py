"""Plugin discovery imports every installed plugin when pi starts, even for `pi --help`:
loading this one must not pull in the tools, asyncio or other heavy modules."""

import subprocess
import sys

HEAVY = ("asyncio", "pi_core.loop", "pi_core.tools", "pi_plugins.tools.environment", "pi_sandbox.environment")


def test_loading_the_plugin_imports_nothing_heavy():
    code = f"import sys, pi_sandbox; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_plugin_uses_only_the_public_event_not_the_built_in_compaction():
    from pathlib import Path

    import pi_compact_notes

    source = "".join(p.read_text() for p in Path(pi_compact_notes.__file__).parent.glob("*.py"))
    assert "pi_plugins" not in source
