"""The resource plugins in a real agent run: what reaches the provider."""

import datetime

from pi_core.protocol.events import BeforeAgentStartEvent, InputEvent
from pi_core.protocol.messages import TextContent
from pi_core.protocol.options import ResourceOptions
from pi_core.testing import Reply

from support.agents import build_agent, run
from support.resources import RESOURCE_PLUGINS, RecordingUI, tool, write, write_skill


async def submit(agent, text, base_system_prompt=""):
    """What the harness will do with the user's text: the input chain (where skills and
    templates expand), then before_agent_start (where the system prompt is built), then
    the loop."""
    await agent.setup()  # the tools must be known to describe them
    ctx = agent.ctx
    event = await agent.plugins.call("input", event=InputEvent(text=text), ctx=ctx)
    if event.handled:
        return []
    start = BeforeAgentStartEvent(prompt=event.text, images=event.images, system_prompt=base_system_prompt)
    start = await agent.plugins.call("before_agent_start", event=start, ctx=ctx)
    agent.system_prompt = start.system_prompt
    return await agent.prompt(start.prompt, start.images)


from support.cli import trust_project


def make_agent(script, cwd, agent_dir, options=None):
    agent, provider, _ = build_agent(script, *RESOURCE_PLUGINS, tools=[tool("read", "Read a file.")], cwd=str(cwd))
    agent.ctx.agent_dir = agent_dir
    agent.ctx.ui = RecordingUI(has_ui=False)
    if options is not None:
        agent.ctx.options = options
    return agent, provider


def test_the_provider_gets_the_context_file_and_the_skill_list(home, agent_dir, project):
    write(project / "AGENTS.md", "Always run make test before you finish.")
    skill = write_skill(agent_dir / "skills" / "release", description="Cut a release of this project.")
    agent, provider = make_agent([Reply(text="ok")], project, agent_dir)
    messages = run(submit(agent, "hello"))
    assert messages[-1].content[0].text == "ok"
    system = provider.requests[0].system_prompt
    assert "- read: Read a file." in system
    assert f"## {project / 'AGENTS.md'}\n\nAlways run make test before you finish." in system
    assert f"<name>release</name>\n    <description>Cut a release of this project.</description>\n" \
           f"    <location>{skill}</location>" in system
    assert system.index("# Project Context") < system.index("<available_skills>")
    assert system.endswith(f"Current date: {datetime.date.today().isoformat()}\n"
                           f"Current working directory: {project}")
    assert agent.ctx.ui.warnings() == []


def test_the_model_receives_expanded_skills_and_templates_as_the_user_message(home, agent_dir, project):
    skill = write_skill(agent_dir / "skills" / "release", body="Tag, build, publish.")
    write(project / ".pi" / "prompts" / "fix.md", "---\ndescription: Fix an issue\n---\nFix issue #$1 in $2.")
    trust_project(agent_dir, project)  # the project's own templates need it trusted
    agent, provider = make_agent([Reply(text="one"), Reply(text="two")], project, agent_dir)
    run(submit(agent, "/skill:release v1.2"))
    run(submit(agent, "/fix 42 parser.py"))
    user_texts = [m.content[0].text for m in agent.messages if m.role == "user"]
    assert user_texts == [
        f'<skill name="release" location="{skill}">\nPaths in this skill are relative to {skill.parent}.'
        "\n\nTag, build, publish.\n</skill>\n\nv1.2",
        "Fix issue #42 in parser.py.",
    ]
    second = provider.requests[1]
    assert [m.content[0].text for m in second.messages if m.role == "user"] == user_texts
    assert isinstance(second.messages[-1].content[0], TextContent)
    assert second.system_prompt == provider.requests[0].system_prompt


def test_options_of_the_run_shape_what_reaches_the_provider(home, agent_dir, project):
    write(project / "AGENTS.md", "Project rules.")
    write_skill(agent_dir / "skills" / "release")
    options = ResourceOptions(system_prompt="You review code.", append_system_prompt=["Be brief."],
                              context_files=False, skills=False)
    agent, provider = make_agent([Reply(text="ok")], project, agent_dir, options)
    run(submit(agent, "hi"))
    system = provider.requests[0].system_prompt
    assert system.startswith("You review code.\n\nBe brief.\n\nCurrent date: ")
    assert "Project rules." not in system and "<available_skills>" not in system


def test_the_built_in_entry_points_give_the_same_prompt_in_the_order_they_load(home, agent_dir, project):
    from pi_core import Agent
    from pi_core.app.discovery import load_plugins
    from pi_core.testing import ScriptedProvider, scripted_model

    write(project / "AGENTS.md", "Project rules.")
    write_skill(agent_dir / "skills" / "release")
    plugins = load_plugins(cwd=project, agent_dir=agent_dir, discover=False)
    loaded = [info.name for info in plugins.infos]
    assert {"system_prompt", "context_files", "skills", "prompt_templates"} <= set(loaded)
    assert not plugins.errors
    provider = ScriptedProvider([Reply(text="ok")])
    plugins.register(provider, "scripted")
    agent = Agent(model=scripted_model(), plugins=plugins, tools=[tool("read", "Read a file.")], cwd=str(project))
    run(submit(agent, "hi"))
    by_hand, by_hand_provider = make_agent([Reply(text="ok")], project, agent_dir)
    run(submit(by_hand, "hi"))
    assert provider.requests[0].system_prompt == by_hand_provider.requests[0].system_prompt
