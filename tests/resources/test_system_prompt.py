"""The system prompt: our base prompt, user replacements and additions, the sections of
the other resource plugins, date and cwd, in that order whatever the load order."""

import datetime
import itertools

import pytest

from pi_core import hookimpl
from pi_core.protocol.options import ResourceOptions
from pi_plugins import context_files, skills, system_prompt
from pi_plugins.system_prompt import INTRO, add_section

from support.resources import RESOURCE_PLUGINS, system_prompt_of, tool, write, write_skill


def today() -> str:
    """Read when the prompt is checked, not when the module was collected (a run can pass midnight)."""
    return datetime.date.today().isoformat()


def positions(text, *needles):
    found = [text.find(n) for n in needles]
    assert -1 not in found, [n for n, i in zip(needles, found) if i == -1]
    return found


@pytest.fixture
def resources(agent_dir, project):
    write(project / "AGENTS.md", "Run the tests with make test.")
    write_skill(agent_dir / "skills" / "pdf-tools", description="Work with PDF files.")


def test_sections_come_in_order_base_appended_context_skills_date_cwd(make_ctx, project, resources):
    ctx = make_ctx(options=ResourceOptions(append_system_prompt=["Answer in French."]),
                   tools=[tool("read")])
    prompt = system_prompt_of(ctx)
    found = positions(
        prompt, INTRO, "Answer in French.", "# Project Context", "Run the tests with make test.",
        "<available_skills>", "<name>pdf-tools</name>", f"Current date: {today()}",
        f"Current working directory: {project}",
    )
    assert found == sorted(found)
    assert prompt.endswith(f"Current date: {today()}\nCurrent working directory: {project}")


@pytest.mark.parametrize("order", list(itertools.permutations(RESOURCE_PLUGINS)),
                         ids=lambda order: "-".join(m.__name__.rsplit(".", 1)[1][:3] for m in order))
def test_the_prompt_is_the_same_whatever_order_the_plugins_load_in(make_ctx, resources, order):
    expected = system_prompt_of(make_ctx(tools=[tool("read")]))
    assert system_prompt_of(make_ctx(tools=[tool("read")], plugins=order)) == expected


def test_the_prompt_is_made_afresh_each_time_not_piled_on_the_last_one(make_ctx, resources):
    ctx = make_ctx(tools=[tool("read")])
    first = system_prompt_of(ctx)
    assert system_prompt_of(ctx, given=first) == first
    assert first.count("# Project Context") == 1 and first.count("<available_skills>") == 1


def test_system_prompt_option_replaces_the_base_and_keeps_context_skills_date_and_cwd(make_ctx, resources):
    ctx = make_ctx(options=ResourceOptions(system_prompt="You are a careful reviewer."),
                   tools=[tool("read")])
    prompt = system_prompt_of(ctx)
    assert prompt.startswith("You are a careful reviewer.\n\n# Project Context")
    assert INTRO not in prompt and "How to work:" not in prompt
    assert "<name>pdf-tools</name>" in prompt and f"Current date: {today()}" in prompt


def test_system_prompt_option_naming_a_file_uses_the_file(make_ctx, project):
    write(project / "prompts" / "reviewer.md", "Review code, do not write it.")
    ctx = make_ctx(options=ResourceOptions(system_prompt="prompts/reviewer.md"))
    assert system_prompt_of(ctx).startswith("Review code, do not write it.\n\nCurrent date:")


def test_append_system_prompt_adds_each_text_after_the_base(make_ctx, project):
    write(project / "extra.md", "From a file.")
    ctx = make_ctx(options=ResourceOptions(append_system_prompt=["Be terse.", "extra.md"]))
    prompt = system_prompt_of(ctx)
    assert prompt.index(INTRO) < prompt.index("Be terse.\n\nFrom a file.\n\nCurrent date:")


def test_project_SYSTEM_md_replaces_the_base_and_APPEND_SYSTEM_md_is_appended(make_ctx, project, agent_dir):
    write(agent_dir / "SYSTEM.md", "Global system prompt.")
    write(agent_dir / "APPEND_SYSTEM.md", "Global addition.")
    assert system_prompt_of(make_ctx()).startswith("Global system prompt.\n\nGlobal addition.\n\n")
    write(project / ".pi" / "SYSTEM.md", "Project system prompt.")
    write(project / ".pi" / "APPEND_SYSTEM.md", "Project addition.")
    prompt = system_prompt_of(make_ctx())
    assert prompt.startswith("Project system prompt.\n\nProject addition.\n\nCurrent date:")
    assert "Global" not in prompt


def test_the_command_line_wins_over_SYSTEM_md(make_ctx, project):
    write(project / ".pi" / "SYSTEM.md", "From the file.")
    write(project / ".pi" / "APPEND_SYSTEM.md", "Appended from the file.")
    options = ResourceOptions(system_prompt="From the flag.", append_system_prompt=["Appended from the flag."])
    prompt = system_prompt_of(make_ctx(options=options))
    assert prompt.startswith("From the flag.\n\nAppended from the flag.\n\n")
    assert "From the file." not in prompt and "Appended from the file." not in prompt


def test_base_prompt_lists_the_active_tools_by_their_first_description_line(make_ctx):
    tools = [tool("read", "Read a file's contents.\nLong details here."), tool("bash", "Run a command."),
             tool("grep", "Search file contents.")]
    ctx = make_ctx(tools=tools)
    prompt = system_prompt_of(ctx)
    assert "- read: Read a file's contents.\n- bash: Run a command.\n- grep: Search file contents." in prompt
    assert "Long details here." not in prompt
    assert "Explore files with grep rather than bash" in prompt

    ctx.agent.set_active_tools(["read"])
    prompt = system_prompt_of(ctx)
    assert "- read:" in prompt and "- bash:" not in prompt and "rather than bash" not in prompt


def test_base_prompt_says_when_there_are_no_tools(make_ctx):
    assert "You have no tools in this session" in system_prompt_of(make_ctx(tools=[]))


def test_later_before_agent_start_handlers_see_the_complete_prompt_and_may_replace_it(make_ctx, resources):
    seen = []

    class UserPlugin:
        @hookimpl
        def before_agent_start(self, event):
            seen.append(event.system_prompt)
            return event.__class__(prompt=event.prompt, system_prompt="Replaced.")

    ctx = make_ctx(tools=[tool("read")], extra=[UserPlugin()])
    assert system_prompt_of(ctx) == "Replaced."
    assert "# Project Context" in seen[0] and "<available_skills>" in seen[0]
    assert seen[0].endswith(f"Current working directory: {ctx.cwd}")


@pytest.mark.parametrize("order", [(skills, context_files), (context_files, skills)], ids=["sk-co", "co-sk"])
def test_without_the_system_prompt_plugin_sections_are_added_to_the_given_prompt(make_ctx, resources, order):
    ctx = make_ctx(plugins=order, tools=[tool("read")])
    prompt = system_prompt_of(ctx, given="A base of my own.")
    assert prompt.startswith("A base of my own.\n\n# Project Context")
    assert prompt.index("# Project Context") < prompt.index("<available_skills>")
    assert system_prompt_of(ctx, given=prompt) == prompt


def test_a_failing_section_is_reported_and_the_rest_of_the_prompt_is_kept(make_ctx, resources, monkeypatch):
    async def broken(ctx):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(context_files, "section", broken)
    ctx = make_ctx(tools=[tool("read")])
    prompt = system_prompt_of(ctx)
    assert INTRO in prompt and "<available_skills>" in prompt
    assert any("disk on fire" in str(e) for e in ctx.plugins.errors)


def test_add_section_goes_before_the_date_and_cwd_footer():
    footer = f"Current date: {today()}\nCurrent working directory: /w"
    assert add_section(f"Base.\n\n{footer}", "Section.") == f"Base.\n\nSection.\n\n{footer}"
    assert add_section("Base.", "Section.") == "Base.\n\nSection."
    assert add_section("", "Section.") == "Section."
    assert add_section("Base.\n\nSection.", "Section.") == "Base.\n\nSection."


@pytest.mark.process
def test_the_plugin_module_stays_light_to_import():
    import subprocess
    import sys

    code = ("import sys, pi_plugins.system_prompt, pi_plugins.context_files, pi_plugins.skills, "
            "pi_plugins.prompt_templates; print(' '.join(m for m in ('yaml', 'pi_core.loop', 'jsonschema') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_system_prompt_module_has_the_section_plugins_it_composes():
    assert list(system_prompt.SECTION_PLUGINS) == [context_files.__name__, skills.__name__]


def test_add_section_goes_before_the_sections_named_as_later():
    prompt = "Base.\n\n# Skills\n\nlist"
    assert add_section(prompt, "# Context", before=("# Skills",)) == "Base.\n\n# Context\n\n# Skills\n\nlist"
    assert add_section("# Skills\n\nlist", "# Context", before=("# Skills",)) == "# Context\n\n# Skills\n\nlist"


def test_an_untrusted_projects_SYSTEM_md_and_APPEND_SYSTEM_md_are_left_out(make_ctx, project, agent_dir):
    write(agent_dir / "APPEND_SYSTEM.md", "Global addition.")
    write(project / ".pi" / "SYSTEM.md", "Project system prompt.")
    write(project / ".pi" / "APPEND_SYSTEM.md", "Project addition.")
    prompt = system_prompt_of(make_ctx(trusted=False))
    assert "Project" not in prompt and "Global addition." in prompt
