"""The layers import only downward (design.md section 2):

- ``pi_core.protocol`` imports nothing of pi-harness outside itself;
- ``hookspecs`` imports ``pi_core.protocol`` and nothing else of pi-harness, and names no
  other module, not even in a docstring or under ``TYPE_CHECKING``;
- the core proper (``pi_core`` outside ``app/`` and ``testing/``) imports neither the shell
  (``pi_core.app``), the built-in plugins (``pi_plugins``) nor ``contrib``. The one
  exception is the package's ``__init__``, the public facade: it names the shell
  (``Settings`` …) and the SDK's packages (``create_harness``, ``ModelRegistry`` …) in its
  table, to import on first use, so it too must not import them when it is imported
  (the fresh-interpreter test holds it).

Each module is imported on its own, in an interpreter that has loaded no other module of
the project, and what it brought into ``sys.modules`` is read: a lazy import inside a
function does not count, an import at module level (however indirect) does.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).parents[2]
CORE = ROOT / "pi_core"

PROBE = r"""
import importlib, json, sys
ours = ("pi_core", "pi_plugins", "hookspecs", "contrib")
found = {}
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ours]:
        del sys.modules[loaded]
    importlib.import_module(name)
    found[name] = sorted(m for m in sys.modules if m.split(".")[0] in ours)
print(json.dumps(found))
"""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_proper() -> list[str]:
    return sorted(module_name(p) for p in CORE.rglob("*.py")
                  if not {"app", "testing"} & set(p.relative_to(CORE).parts[:-1]))


def imported_by(modules: list[str]) -> dict[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *modules], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_core_proper_imports_neither_the_shell_nor_the_plugins():
    upward = {name: [m for m in loaded if m.startswith(("pi_core.app", "pi_plugins", "contrib"))]
              for name, loaded in imported_by(core_proper()).items()}
    assert {name: found for name, found in upward.items() if found} == {}


def test_the_protocol_imports_only_the_protocol():
    protocol = [m for m in core_proper() if m.startswith("pi_core.protocol")]
    assert len(protocol) > 10
    outside = {name: [m for m in loaded if m not in ("pi_core", "pi_core.protocol")
                      and not m.startswith("pi_core.protocol.")]
               for name, loaded in imported_by(protocol).items()}
    assert {name: found for name, found in outside.items() if found} == {}


def test_the_hook_specs_name_only_the_protocol():
    loaded = imported_by(["hookspecs"])["hookspecs"]
    assert [m for m in loaded if m.startswith(("pi_core.", "pi_plugins", "contrib"))
            and not m.startswith("pi_core.protocol")] == []
    for spec in (ROOT / "hookspecs").glob("*.py"):
        named = set(re.findall(r"\b(pi_core(?:\.\w+)*|pi_plugins(?:\.\w+)*|contrib\b)", spec.read_text()))
        assert {n for n in named if n != "pi_core" and not n.startswith("pi_core.protocol")} == set(), spec.name


def test_no_core_module_imports_upward_even_inside_a_function():
    """What the fresh-interpreter tests cannot see: an import that runs only when a
    function is called (``from pi_plugins.session_listing.listing import ...`` inside a method)."""
    upward = re.compile(r"^\s*(?:from|import)\s+(pi_core\.app|pi_plugins|contrib)\b", re.M)
    offenders = {}
    # The public facade (pi_core/__init__.py) re-exports the shell's SDK names: its
    # ``TYPE_CHECKING`` imports name them for type checkers, its table imports them on
    # first use. Every other core module keeps the rule.
    for name in [m for m in core_proper() if m != "pi_core"]:
        path = ROOT / (name.replace(".", "/") + ".py")
        if not path.exists():
            path = ROOT / name.replace(".", "/") / "__init__.py"
        found = upward.findall(path.read_text())
        if found:
            offenders[name] = found
    assert offenders == {}
