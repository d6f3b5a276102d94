"""One call style (design.md section 4): a call site names the hook and passes its
arguments (``await plugins.call("prepare_request", request=...)``); the marker on the
hook's spec decides how results combine. No call site outside the plugin manager picks
a kind by hand (``.notify("turn_end", ...)``, ``.chain(...)``, ``.decide(...)``,
``.collect(...)`` with a hook's name), read from the sources."""

import ast
from pathlib import Path

import hookspecs

ROOT = Path(__file__).parents[2]
KINDS = {"notify", "decide", "chain", "collect"}


def hook_names() -> set[str]:
    return {name for module in hookspecs.SPEC_MODULES for name in dir(module)
            if getattr(getattr(module, name), "pi_dispatch", None) is not None}


def sources() -> list[Path]:
    found = []
    for folder in ("pi_core", "pi_plugins", "hookspecs", "contrib", "tests", "docs", "bench"):
        found += [p for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts]
    return [p for p in found if p.relative_to(ROOT).as_posix() != "pi_core/plugins.py"]


def kind_picked_by_hand(path: Path, hooks: set[str], root: Path = ROOT) -> list[str]:
    """``x.<kind>(<hook name or event.type>, ...)``: the call names a kind itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in KINDS and node.args):
            continue
        first = node.args[0]
        names_a_hook = (isinstance(first, ast.Constant) and first.value in hooks) or (
            isinstance(first, ast.Attribute) and first.attr == "type")
        if names_a_hook:
            found.append(f"{path.relative_to(root)}:{node.lineno}: .{node.func.attr}(...)")
    return found


def test_no_call_site_picks_a_hook_kind_by_hand():
    hooks = hook_names()
    assert len(hooks) > 30
    assert [hit for path in sources() for hit in kind_picked_by_hand(path, hooks)] == []


def test_the_check_sees_a_kind_picked_by_hand(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('await plugins.chain("prepare_request", "request", r, ctx=ctx)\n'
                      'await plugins.notify(event.type, event=event, ctx=ctx)\n'
                      'ctx.ui.notify("turn_end is a word here too")\n'
                      'await plugins.call("prepare_request", request=r, ctx=ctx)\n')
    found = kind_picked_by_hand(sample, hook_names(), root=tmp_path)
    assert found == ["sample.py:1: .chain(...)", "sample.py:2: .notify(...)"]


def test_the_kinds_are_private_to_the_plugin_manager():
    from pi_core.plugins import Plugins

    assert not {"notify", "decide", "chain"} & set(dir(Plugins))
    assert {"call", "has"} <= set(dir(Plugins))
