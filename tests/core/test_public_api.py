"""``pi_core`` is the one public API (with ``pi_core.testing`` and ``hookspecs``).

- every name in ``pi_core.__all__`` and ``pi_core.testing.__all__`` imports, and is the
  object of the module the facade's table maps it to;
- the table, the ``TYPE_CHECKING`` imports that show it to type checkers and ``__all__``
  say the same; the facade names only the core, the shell and the hook specs;
- importing ``pi_core`` alone imports nothing else (``pi --help`` reads its version);
- the docs' examples and code blocks, the README and the contrib packages import only the
  public modules: never a deeper ``pi_core.`` module, and a built-in plugin's module only
  where the rule's few exceptions below say why.
"""

import ast
import doctest
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pi_core
import pi_core.testing

ROOT = Path(__file__).parents[2]
FACADES = {"pi_core": pi_core, "pi_core.testing": pi_core.testing}
PUBLIC = ("pi_core", "pi_core.testing")

#: Modules of the built-in plugins that docs and contrib may import, and why.
#: (Importing a built-in plugin itself, ``import pi_plugins.tools`` or ``from pi_plugins
#: import checkpoints``, to hand it to ``create_harness``, is always allowed.)
BUILT_IN_APIS = {
    "pi_plugins.providers.kit": "the provider author's kit (MessageBuilder), as docs/providers.md says",
    "pi_plugins.batch.runner": "run_batch, the batch plugin's Python API (docs/agents.md)",
    "pi_plugins.tools.environment": "LocalEnvironment, the built-in tools' machine, to build another "
                                    "execution environment on (hooks_tools.py, pi-sandbox)",
}
#: Deeper core imports a contrib package's source still makes, and why.
CONTRIB_EXCEPTIONS: dict = {}


# ---------------------------------------------------------------- the facades


@pytest.mark.parametrize("facade", FACADES, ids=str)
def test_every_public_name_imports_and_is_the_object_of_its_module(facade):
    package = FACADES[facade]
    table = package._LAZY
    names = [n for n in package.__all__ if n != "__version__"]
    assert names and len(set(names)) == len(names)
    for name in names:
        scope: dict = {}
        exec(f"from {facade} import {name}", scope)
        assert scope[name] is getattr(importlib.import_module(table[name]), name), name
    assert set(names) <= set(dir(package))
    with pytest.raises(AttributeError):
        package.NotAPublicName  # noqa: B018


def type_checking_imports(path: Path) -> dict[str, str]:
    """name -> module, from what type checkers read: the package's stub (``__init__.pyi``,
    every import a re-export), else the imports under ``if TYPE_CHECKING:``."""
    found: dict[str, str] = {}
    stub = path.with_suffix(".pyi")
    if stub.exists():
        for node in ast.parse(stub.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                assert all(alias.asname == alias.name for alias in node.names), ast.dump(node)
                found.update({alias.name: node.module for alias in node.names})
        return found
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                found.update({alias.name: statement.module for alias in statement.names})
    return found


@pytest.mark.parametrize("facade", FACADES, ids=str)
def test_the_table_the_type_checkers_imports_and_all_agree(facade):
    package = FACADES[facade]
    assert type_checking_imports(Path(package.__file__)) == package._LAZY
    assert set(package.__all__) - {"__version__"} == set(package._LAZY)
    stub = Path(package.__file__).with_suffix(".pyi")
    if stub.exists():  # the stub's __all__ is the package's
        assigned = [n for n in ast.parse(stub.read_text()).body if isinstance(n, ast.Assign)
                    and any(getattr(t, "id", None) == "__all__" for t in n.targets)]
        assert [ast.literal_eval(n.value) for n in assigned] == [package.__all__]


def test_the_facade_names_the_core_the_shell_the_hook_specs_and_the_sdks_packages_only():
    """Above the shell it names only what the SDK composes (models and keys, the session
    list, ``create_harness``), never a feature's plugin, which ``-builtin:NAME`` may drop."""
    modules = set(pi_core._LAZY.values())
    sdk = ("pi_plugins.sdk", "pi_plugins.models.", "pi_plugins.session_listing.")
    assert {m for m in modules if not m.startswith(("pi_core.", "hookspecs.", *sdk))} == set()
    assert {m for m in modules if m.startswith("pi_core.testing")} == set()


def test_the_sdk_names_come_from_the_top():
    for name in ("hookimpl", "tool", "Tool", "ToolResult", "ToolRun", "Command", "Flag", "Shortcut",
                 "MessageRenderer", "CliCommand", "Mode", "Model", "ModelCost", "UserMessage",
                 "AssistantMessage", "ToolResultMessage", "CustomMessage", "TextContent", "ImageContent",
                 "ThinkingContent", "ToolCall", "Usage", "ToolCallDecision", "CompactionDecision", "Ctx",
                 "create_harness", "Session", "Settings", "ExecutionEnvironment", "AbortSignal", "EventBus"):
        assert name in pi_core.__all__, name


@pytest.mark.process
def test_importing_pi_core_imports_nothing_else():
    code = ("import sys; before = set(sys.modules); import pi_core; "
            "print(' '.join(sorted(set(sys.modules) - before)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pi_core"]  # no pluggy, asyncio, httpx, typing ...


# ---------------------------------------------------------------- who imports what


def imports(source: str, where: str) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every absolute import, inside functions too."""
    found = []
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
    return found


def non_public(module: str, names: list[str]) -> bool:
    """Whether importing ``names`` from ``module`` goes past the public API."""
    top = module.split(".")[0]
    if top == "hookspecs" or module in PUBLIC:
        return False
    if top == "pi_core":
        return True
    if top == "pi_plugins":
        # a built-in plugin itself, to hand to create_harness: ``import pi_plugins.tools``,
        # ``from pi_plugins import tools``
        plugin_itself = module == "pi_plugins" or (not names and module.count(".") == 1)
        return not plugin_itself and module not in BUILT_IN_APIS
    return False  # the standard library, a third-party library, the package itself


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(index, source) of the page's python blocks, doctests as their source; excerpts of
    docs/examples (a first line ``# docs/examples/...``) are checked in their file."""
    found = []
    for index, block in enumerate(re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)):
        if re.match(r"# docs/examples/", block):
            continue
        if ">>>" in block:
            block = "".join(example.source for example in doctest.DocTestParser().get_examples(block))
        found.append((index, block))
    return found


def docs_sources() -> list[tuple[str, str]]:
    pages = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
    sources = [(f"{page.relative_to(ROOT)} block {i}", block) for page in pages for i, block in python_blocks(page)]
    sources += [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "docs").rglob("*.py"))]
    return sources


def test_the_docs_import_only_the_public_api():
    sources = docs_sources()
    assert len(sources) > 20
    offenders = [f"{where}:{line}: {module}" for where, source in sources
                 for line, module, names in imports(source, where) if non_public(module, names)]
    assert offenders == []


def test_the_contrib_packages_import_only_the_public_api():
    offenders = []
    files = sorted(ROOT.glob("contrib/*/src/**/*.py"))
    assert len(files) > 6
    for path in files:
        package = path.relative_to(ROOT).parts[3]
        for line, module, names in imports(path.read_text(), str(path)):
            if non_public(module, names) and (package, module) not in CONTRIB_EXCEPTIONS:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {module}")
    assert offenders == []


def test_the_rule_tells_public_from_deep_imports():
    assert not non_public("pi_core", ["hookimpl"])
    assert not non_public("pi_core.testing", ["Reply"])
    assert not non_public("hookspecs.markers", ["hookspec"])
    assert not non_public("attrs", ["define"])
    assert not non_public("pi_plugins.tools", [])  # import pi_plugins.tools: a built-in plugin
    assert not non_public("pi_plugins", ["checkpoints"])
    assert non_public("pi_core.protocol.tools", ["Tool"])
    assert non_public("pi_plugins.sdk", ["create_harness"])
    assert non_public("pi_plugins.tools.runner", ["run_command"])
    assert non_public("pi_plugins.tools", ["LocalEnvironment"])
