"""Skills: discovery, validation, the system-prompt list, ``/skill:name args``."""

import json
import os

import pytest

from pi_core import hookimpl
from pi_core.protocol.options import ResourceOptions
from pi_plugins import skills

from support.agents import run
from support.resources import commands_of, expand, system_prompt_of, tool, write, write_skill


def names(ctx):
    return [s.name for s in run(skills.load(ctx)).skills]


def test_skills_are_listed_by_name_description_and_location(make_ctx, agent_dir):
    path = write_skill(agent_dir / "skills" / "pdf-tools", description="Fill & merge <PDF> files.")
    prompt = system_prompt_of(make_ctx(tools=[tool("read")]))
    assert (
        "<available_skills>\n  <skill>\n    <name>pdf-tools</name>\n"
        "    <description>Fill &amp; merge &lt;PDF&gt; files.</description>\n"
        f"    <location>{path}</location>\n  </skill>\n</available_skills>"
    ) in prompt
    assert "read the skill's file with the read tool" in prompt


def test_skills_come_from_every_location_in_precedence_order(make_ctx, home, agent_dir, project, tmp_path):
    repo = tmp_path / "root" / "repo"
    (repo / ".git").mkdir()
    write_skill(tmp_path / "shared" / "from-project-settings")
    write(project / ".pi" / "settings.json", json.dumps({"skills": ["../../../../shared"]}))
    write_skill(project / ".pi" / "skills" / "from-pi-project")
    write_skill(project / ".agents" / "skills" / "from-agents-cwd")
    write_skill(repo / ".agents" / "skills" / "from-agents-repo")
    write_skill(tmp_path / "root" / ".agents" / "skills" / "above-the-git-root")
    write_skill(tmp_path / "global-extra" / "from-user-settings")
    write(agent_dir / "settings.json", json.dumps({"skills": [str(tmp_path / "global-extra")]}))
    write_skill(agent_dir / "skills" / "from-agent-dir")
    write_skill(home / ".agents" / "skills" / "from-home-agents")
    write_skill(tmp_path / "cli" / "from-cli")
    ctx = make_ctx(options=ResourceOptions(skill_paths=[tmp_path / "cli" / "from-cli"]))
    assert names(ctx) == [
        "from-project-settings", "from-pi-project", "from-agents-cwd", "from-agents-repo",
        "from-user-settings", "from-agent-dir", "from-home-agents", "from-cli",
    ]


def test_agents_folders_are_searched_up_to_the_filesystem_root_outside_a_repository(make_ctx, tmp_path):
    write_skill(tmp_path / "root" / ".agents" / "skills" / "high-up")
    assert names(make_ctx()) == ["high-up"]


def test_top_level_md_files_are_skills_in_pi_folders_but_not_in_agents_folders(make_ctx, agent_dir, home):
    write(agent_dir / "skills" / "loose.md", "---\nname: loose\ndescription: A single file.\n---\nBody")
    write(home / ".agents" / "skills" / "ignored.md", "---\nname: ignored\ndescription: Not here.\n---\n")
    write_skill(home / ".agents" / "skills" / "nested")
    assert names(make_ctx()) == ["loose", "nested"]


def test_a_folder_with_SKILL_md_is_one_skill_and_is_not_searched_further(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "outer")
    write_skill(agent_dir / "skills" / "outer" / "inner")
    write_skill(agent_dir / "skills" / "group" / "deep" / "deeper")
    write_skill(agent_dir / "skills" / ".hidden")
    write_skill(agent_dir / "skills" / "node_modules" / "dependency")
    assert names(make_ctx()) == ["deeper", "outer"]


def test_disable_model_invocation_hides_a_skill_from_the_model_but_keeps_its_command(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "secret", extra="disable-model-invocation: true", body="Secret steps.")
    write_skill(agent_dir / "skills" / "open")
    ctx = make_ctx(tools=[tool("read")])
    prompt = system_prompt_of(ctx)
    assert "<name>open</name>" in prompt and "secret" not in prompt
    assert "Secret steps." in expand(ctx, "/skill:secret")
    assert {"skill:secret", "skill:open"} <= {c.name for c in commands_of(ctx)}


def test_invalid_skills_are_reported_and_the_rest_still_load(make_ctx, agent_dir):
    folder = agent_dir / "skills"
    write(folder / "no-description" / "SKILL.md", "---\nname: no-description\n---\nBody")
    write(folder / "no-frontmatter" / "SKILL.md", "Just a body.")
    write(folder / "bad-yaml" / "SKILL.md", "---\nname: [bad-yaml\ndescription: x\n---\n")
    write_skill(folder / "Bad_Name", name="Bad_Name")
    write_skill(folder / "mismatch", name="other-name")
    write_skill(folder / "wordy", description="x" * 1025)
    write_skill(folder / "good")
    ctx = make_ctx(tools=[tool("read")])
    prompt = system_prompt_of(ctx)
    assert names(ctx) == ["Bad_Name", "good", "other-name", "wordy"]
    assert "<name>good</name>" in prompt
    warnings = "\n".join(ctx.ui.warnings())
    for expected in [
        f"{folder / 'no-description' / 'SKILL.md'}: description is required",
        f"{folder / 'no-frontmatter' / 'SKILL.md'}: description is required",
        f"{folder / 'bad-yaml' / 'SKILL.md'}: invalid YAML frontmatter",
        "name may only use lowercase letters a-z, digits 0-9 and hyphens",
        'name "other-name" does not match parent directory "mismatch"',
        "description exceeds 1024 characters (1025)",
    ]:
        assert expected in warnings
    assert all(w.startswith("skills: ") for w in ctx.ui.warnings())


@pytest.mark.parametrize("name, problem", [
    ("-lead", "must not start or end with a hyphen"),
    ("two--hyphens", "two hyphens in a row"),
    ("a" * 65, "longer than 64 characters (65)"),
])
def test_names_break_the_standard_in_each_way_it_names(name, problem):
    assert any(problem in p for p in skills.name_problems(name, name))


def test_a_name_collision_keeps_the_first_skill_and_reports_the_other(make_ctx, agent_dir, project):
    first = write_skill(project / ".pi" / "skills" / "review", description="Project review.")
    second = write_skill(agent_dir / "skills" / "review", description="Global review.")
    ctx = make_ctx(tools=[tool("read")])
    [skill] = run(skills.load(ctx)).skills
    assert skill.path == first and skill.description == "Project review."
    [warning] = ctx.ui.warnings()
    assert warning == f'skills: {second}: skill name "review" is taken by {first}; this one is ignored'


def test_the_same_skill_reached_twice_through_a_symlink_is_loaded_once_quietly(make_ctx, agent_dir, project):
    write_skill(agent_dir / "skills" / "linked")
    (project / ".pi").mkdir()
    os.symlink(agent_dir / "skills", project / ".pi" / "skills")
    ctx = make_ctx()
    assert names(ctx) == ["linked"] and ctx.ui.warnings() == []


def test_skill_command_expands_to_the_instructions_then_the_arguments(make_ctx, agent_dir):
    path = write_skill(agent_dir / "skills" / "pdf-tools", body="# PDF\n\nRun ./extract.sh FILE.")
    ctx = make_ctx()
    assert expand(ctx, "/skill:pdf-tools  extract page 2 ") == (
        f'<skill name="pdf-tools" location="{path}">\n'
        f"Paths in this skill are relative to {path.parent}.\n\n"
        "# PDF\n\nRun ./extract.sh FILE.\n</skill>\n\nextract page 2"
    )
    assert expand(ctx, "/skill:pdf-tools").endswith("Run ./extract.sh FILE.\n</skill>")


def test_skill_command_reads_the_file_as_it_is_now(make_ctx, agent_dir):
    folder = agent_dir / "skills" / "notes"
    write_skill(folder, body="Old steps.")
    ctx = make_ctx()
    run(skills.load(ctx))
    write_skill(folder, body="New steps.")
    assert "New steps." in expand(ctx, "/skill:notes")


def test_unknown_skills_and_other_text_are_left_untouched(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "known")
    ctx = make_ctx()
    for text in ["/skill:unknown do it", "please /skill:known", "/skills:known", "plain text"]:
        assert expand(ctx, text) == text


def test_a_skill_whose_file_vanished_is_reported_and_the_text_kept(make_ctx, agent_dir):
    path = write_skill(agent_dir / "skills" / "gone")
    ctx = make_ctx()
    run(skills.load(ctx))
    path.unlink()
    assert expand(ctx, "/skill:gone now") == "/skill:gone now"
    assert "cannot be read" in ctx.ui.warnings()[-1]


def test_no_skills_turns_discovery_off_but_an_explicit_skill_still_loads(make_ctx, agent_dir, tmp_path):
    write_skill(agent_dir / "skills" / "discovered")
    explicit = write_skill(tmp_path / "mine" / "explicit")
    ctx = make_ctx(options=ResourceOptions(skills=False, skill_paths=[explicit]), tools=[tool("read")])
    assert names(ctx) == ["explicit"]
    assert "<name>explicit</name>" in system_prompt_of(ctx)
    assert "<skill name=\"explicit\"" in expand(ctx, "/skill:explicit")
    assert names(make_ctx(options=ResourceOptions(skills=False))) == []


def test_a_missing_or_wrong_skill_path_is_reported(make_ctx, tmp_path):
    write(tmp_path / "notes.txt", "text")
    ctx = make_ctx(options=ResourceOptions(skill_paths=[tmp_path / "nowhere", tmp_path / "notes.txt"]))
    assert names(ctx) == []
    assert ctx.ui.warnings() == [
        f"skills: {tmp_path / 'nowhere'}: skill path does not exist",
        f"skills: {tmp_path / 'notes.txt'}: a skill path must be a folder or a .md file",
    ]


@pytest.mark.parametrize("entries,expected", [
    (["extra", "extra/x*", "!old", "-skills/b"], {"x", "a"}),
    (["extra", "!old", "+skills/old"], {"x", "y", "a", "b", "old"}),
    (["!*"], set()),
], ids=["glob-include-exclude-and-exact-out", "exact-path-back-in", "exclude-all"])
def test_settings_patterns_choose_among_listed_and_found_skills_as_pi_does(make_ctx, agent_dir, entries, expected):
    """pi's resource lists: plain entries are paths; globs choose among what they give;
    ``!glob`` leaves out, ``+path`` puts back, ``-path`` takes out (exact, from the
    settings file's folder), and the ``!``/``+``/``-`` entries also filter the scope's
    own ``skills/`` folder."""
    for name in ("a", "b", "old"):
        write_skill(agent_dir / "skills" / name)
    for name in ("x", "y"):
        write_skill(agent_dir / "extra" / name)
    write(agent_dir / "settings.json", json.dumps({"skills": entries}))
    ctx = make_ctx()
    assert set(names(ctx)) == expected
    assert ctx.ui.warnings() == []


def test_the_skill_list_needs_the_read_tool(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "listed")
    assert "<available_skills>" not in system_prompt_of(make_ctx(tools=[tool("bash")]))
    assert "<available_skills>" in system_prompt_of(make_ctx(tools=[tool("read"), tool("bash")]))
    custom = ResourceOptions(system_prompt="Custom.")
    assert "<available_skills>" in system_prompt_of(make_ctx(options=custom))  # tools not known yet


def test_skill_commands_can_be_turned_off_in_settings(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "quiet")
    assert [c.name for c in commands_of(make_ctx())] == ["skill:quiet"]
    write(agent_dir / "settings.json", json.dumps({"enableSkillCommands": False}))
    assert commands_of(make_ctx()) == []


def test_skill_commands_describe_their_skill(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "pdf-tools", description="Work with PDF files.")
    [command] = commands_of(make_ctx())
    assert (command.name, command.description, command.source, command.handler) == (
        "skill:pdf-tools", "Work with PDF files.", "skill", None)


def test_user_input_hooks_see_the_raw_text_before_expansion(make_ctx, agent_dir):
    write_skill(agent_dir / "skills" / "pdf-tools")
    seen = []

    class UserPlugin:
        @hookimpl
        def input(self, event):
            seen.append(event.text)

    ctx = make_ctx(extra=[UserPlugin()])
    assert expand(ctx, "/skill:pdf-tools go").startswith("<skill ")
    assert seen == ["/skill:pdf-tools go"]


def test_plugins_add_skill_and_prompt_paths_through_resources_discover(make_ctx, tmp_path):
    extra = write_skill(tmp_path / "plugin-skills" / "from-plugin")
    write(tmp_path / "plugin-prompts" / "hello.md", "Say hello to $1.")
    asked = []

    class Provider:
        @hookimpl
        def resources_discover(self, event):
            asked.append(event.reason)
            return [("skill", extra.parent), ("prompt", tmp_path / "plugin-prompts"), ("theme", "x"), "junk"]

    ctx = make_ctx(extra=[Provider()])
    assert names(ctx) == ["from-plugin"]
    assert expand(ctx, "/hello Ann") == "Say hello to Ann."
    assert asked == ["startup"]
    assert len([w for w in ctx.ui.warnings() if w.startswith("resources: resources_discover: ignored")]) == 2
    from pi_plugins import resources

    resources.reload(ctx)
    assert names(ctx) == ["from-plugin"] and asked == ["startup", "reload"]


def test_an_untrusted_project_keeps_its_skills_to_itself(make_ctx, agent_dir, project, tmp_path):
    write_skill(project / ".pi" / "skills" / "from-pi-project")
    write_skill(project / ".agents" / "skills" / "from-agents-cwd")
    write_skill(tmp_path / "shared" / "from-project-settings")
    write(project / ".pi" / "settings.json", json.dumps({"skills": [str(tmp_path / "shared")]}))
    write_skill(agent_dir / "skills" / "from-agent-dir")
    assert names(make_ctx(trusted=False)) == ["from-agent-dir"]
    assert "from-pi-project" in names(make_ctx(trusted=True))
