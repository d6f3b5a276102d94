"""The chat's parts talk to the chat through public names: the slash commands and the
dialogs they open use only what :class:`ChatPort` names, the chat provides all of it, and
no module of the interactive mode reaches a private attribute of the chat."""

from __future__ import annotations

import ast
from pathlib import Path

import pi_plugins.interactive as interactive
from pi_plugins.interactive.app import InteractiveApp
from pi_plugins.interactive.port import ChatPort

FOLDER = Path(interactive.__file__).parent
#: The commands and the dialogs they open: they see the chat as a ChatPort.
COMMAND_MODULES = ["commands.py", "settings_dialog.py", "scoped_models.py", "session_picker.py", "share.py"]
#: How the modules name the chat they hold.
HOLDERS = {"tui", "_tui", "_app"}


def _chat_attributes(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every attribute read or set on the chat in ``path``: ``tui.name``
    or ``self.tui.name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        held = node.value
        if (isinstance(held, ast.Name) and held.id in HOLDERS) or (
                isinstance(held, ast.Attribute) and held.attr in HOLDERS
                and isinstance(held.value, ast.Name) and held.value.id == "self"):
            found.append((node.lineno, node.attr))
    return found


def _port_names() -> set[str]:
    names = set(ChatPort.__annotations__)
    names |= {name for name, value in vars(ChatPort).items()
              if not name.startswith("_") and (callable(value) or isinstance(value, property))}
    return names


def _assigned_in_init() -> set[str]:
    tree = ast.parse((FOLDER / "app.py").read_text(encoding="utf-8"))
    init = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    names = set()
    for node in ast.walk(init):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            for element in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name) \
                        and element.value.id == "self":
                    names.add(element.attr)
    return names


def test_no_module_of_the_chat_reaches_a_private_attribute_of_the_chat():
    reached = [f"{path.name}:{line}: .{name}" for path in sorted(FOLDER.glob("*.py")) if path.name != "app.py"
               for line, name in _chat_attributes(path) if name.startswith("_") and not name.startswith("__")]
    assert reached == []


def test_the_commands_use_only_what_the_port_names():
    port = _port_names()
    outside = [f"{name}:{line}: .{attr}" for name in COMMAND_MODULES
               for line, attr in _chat_attributes(FOLDER / name) if attr not in port]
    assert outside == []


def test_the_chat_provides_everything_the_port_names():
    provided = _assigned_in_init() | {name for name in dir(InteractiveApp) if not name.startswith("_")}
    assert sorted(_port_names() - provided) == []
