"""pi_core.testing, the kit plugin authors test with: its pytest plugin, the recording UI,
running commands, the import-cost check, and that contrib's tests need nothing else."""

import ast
import asyncio
import textwrap
from pathlib import Path

import pytest

from pi_core import hookimpl
from pi_core.protocol.commands import Command
from pi_core.testing import RecordingUI, Reply, assert_light_import, run_command

ROOT = Path(__file__).parents[2]
pytest_plugins = ["pytester"]


@pytest.mark.process
def test_an_installed_pi_harness_gives_every_pytest_run_the_harness_fixture(pytester):
    pytester.makepyfile(textwrap.dedent('''
        import asyncio
        from pi_core.testing import Reply

        def test_a_scripted_answer(harness, recording_ui):
            async def scenario():
                made = await harness(script=[Reply(text="hello there")], ui=recording_ui)
                await made.prompt("hi")
                return made
            made = asyncio.run(scenario())
            assert made.messages[-1].text == "hello there"
            assert made.session.file.parent == harness.sessions
            assert harness.provider.requests[0].messages[0].content[0].text == "hi"
    '''))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


class Greeter:
    @hookimpl
    def register_commands(self):
        async def greet(args, ctx):
            ctx.ui.notify(f"hello {args}")
            return await ctx.ui.select("Which?", ["Allow once", "Deny"])
        return [Command(name="greet", description="Say hello", handler=greet)]


def test_run_command_returns_what_the_handler_returns_and_the_ui_records_it(harness):
    ui = RecordingUI(selects=["Allow"])

    async def scenario():
        made = await harness(Greeter(), ui=ui)
        return await run_command(made, "/greet world")

    assert asyncio.run(scenario()) == "Allow once"
    assert ui.messages() == ["hello world"]
    assert [(d.kind, d.title, d.detail) for d in ui.dialogs] == [("select", "Which?", ["Allow once", "Deny"])]


def test_run_command_names_the_commands_there_are_when_one_is_unknown(harness):
    async def scenario():
        made = await harness(Greeter())
        await run_command(made, "/grete")

    with pytest.raises(LookupError, match=r"no plugin command /grete; there are: /greet"):
        asyncio.run(scenario())


def test_the_recording_ui_answers_in_order_then_as_a_session_without_a_ui_would():
    ui = RecordingUI(confirms=[True], inputs=["typed"])

    async def scenario():
        return [await ui.confirm("one?"), await ui.confirm("two?"), await ui.input("name"),
                await ui.input("again"), await ui.select("pick", ["a"]), await ui.editor("edit", "x")]

    assert asyncio.run(scenario()) == [True, False, "typed", None, None, None]
    assert [d.kind for d in ui.dialogs] == ["confirm", "confirm", "input", "input", "select", "editor"]


def test_a_select_answer_that_matches_no_option_fails_loudly():
    ui = RecordingUI(selects=["Maybe"])
    with pytest.raises(AssertionError, match="no option of 'Allow\\?' starts with 'Maybe'"):
        asyncio.run(ui.select("Allow?", ["Yes", "No"]))


@pytest.mark.process
def test_assert_light_import_names_what_a_heavy_plugin_imports(tmp_path, monkeypatch):
    (tmp_path / "heavy_plugin.py").write_text("import asyncio\n")
    (tmp_path / "light_plugin.py").write_text("from pi_core import hookimpl\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert_light_import("light_plugin")
    with pytest.raises(AssertionError, match="importing heavy_plugin also imports asyncio"):
        assert_light_import("heavy_plugin")


def imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_contrib_tests_use_only_the_kit_and_the_public_api():
    test_files = sorted(ROOT.glob("contrib/*/tests/*.py"))
    assert len(test_files) >= 5
    offending = {str(f.relative_to(ROOT)): sorted(m for m in imports_of(f)
                                                   if m.split(".")[0] in ("pi_plugins", "support", "tests"))
                 for f in test_files}
    assert {f: m for f, m in offending.items() if m} == {}
