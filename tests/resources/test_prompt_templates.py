"""Prompt templates: ``/name args`` expansion, where templates come from, frontmatter."""

import json

import pytest

from pi_core.protocol.options import ResourceOptions
from pi_plugins import prompt_templates
from pi_plugins.prompt_templates import parse_args, substitute

from support.agents import run
from support.resources import commands_of, expand, write


def names(ctx):
    return [t.name for t in run(prompt_templates.load(ctx)).templates]


@pytest.mark.parametrize("content, expected", [
    ("Fix $1 in $2.", "Fix bug in main.py."),
    ("All: $@", "All: bug main.py with care"),
    ("All: $ARGUMENTS", "All: bug main.py with care"),
    ("Rest: ${@:2}", "Rest: main.py with care"),
    ("Two from the second: ${@:2:2}", "Two from the second: main.py with"),
    ("From zero: ${@:0}", "From zero: bug main.py with care"),
    ("Missing: [$5] [$0]", "Missing: [] []"),
    ("No placeholders.", "No placeholders."),
])
def test_placeholders_take_positional_and_all_arguments(content, expected):
    assert substitute(content, ["bug", "main.py", "with", "care"]) == expected


def test_quotes_group_words_and_are_dropped():
    assert parse_args("Button \"click handler\" 'disabled  support'\tx") == [
        "Button", "click handler", "disabled  support", "x"]
    assert parse_args("") == []


def test_quotes_open_only_at_the_start_of_an_argument_as_in_pi16():
    assert parse_args("a\"b c\"d  doesn't") == ['a"b', 'c"d', "doesn't"]
    assert parse_args('"the \\"fast\\" path" "" \'never closed') == ['the "fast" path', "", "'never", "closed"]


def test_defaults_stand_in_for_missing_or_empty_arguments():
    content = "Review ${1:-everything}; focus on ${@:-correctness}."
    assert substitute(content, []) == "Review everything; focus on correctness."
    assert substitute(content, ["", ""]) == "Review everything; focus on  ."
    assert substitute(content, ["api.py", "speed"]) == "Review api.py; focus on api.py speed."


def test_argument_values_are_never_substituted_again():
    assert substitute("$1 | $@", ["$2", "${@:1}"]) == "$2 | $2 ${@:1}"


def test_a_template_expands_with_its_arguments(make_ctx, agent_dir):
    write(agent_dir / "prompts" / "component.md",
          "---\ndescription: Create a component\n---\nCreate a component named $1 with: $@")
    ctx = make_ctx()
    assert expand(ctx, '/component Button "onClick handler"') == (
        "Create a component named Button with: Button onClick handler")
    assert expand(ctx, "/component") == "Create a component named  with: "


def test_unknown_commands_and_plain_text_are_left_untouched(make_ctx, agent_dir):
    write(agent_dir / "prompts" / "review.md", "Review it.")
    ctx = make_ctx()
    for text in ["/unknown a b", "review", "please /review", "/ review", "/"]:
        assert expand(ctx, text) == text
    assert expand(ctx, "/review") == "Review it."


def test_a_template_named_like_a_skill_command_is_left_to_the_skills_plugin(make_ctx, agent_dir):
    write(agent_dir / "prompts" / "skill:x.md", "From a template.")
    assert expand(make_ctx(), "/skill:x") == "/skill:x"


def test_templates_come_from_every_location_and_the_first_of_a_name_wins(make_ctx, agent_dir, project, tmp_path):
    write(tmp_path / "team" / "nested" / "team-deep.md", "deep")
    write(project / ".pi" / "settings.json", json.dumps({"prompts": ["../../../../team"]}))
    write(project / ".pi" / "prompts" / "review.md", "Project review.")
    write(project / ".pi" / "prompts" / "nested" / "not-found.md", "Folders are not searched.")
    write(agent_dir / "prompts" / "review.md", "Global review.")
    write(agent_dir / "prompts" / "global.md", "Global only.")
    write(agent_dir / "prompts" / "notes.txt", "Not a template.")
    write(tmp_path / "cli.md", "From the command line.")
    ctx = make_ctx(options=ResourceOptions(prompt_template_paths=[tmp_path / "cli.md"]))
    assert names(ctx) == ["team-deep", "review", "global", "cli"]
    assert expand(ctx, "/review") == "Project review."
    [warning] = ctx.ui.warnings()
    assert warning == (f'prompt templates: {agent_dir / "prompts" / "review.md"}: template name "/review" '
                       f'is taken by {project / ".pi" / "prompts" / "review.md"}; this one is ignored')


def test_no_prompt_templates_turns_discovery_off_but_explicit_paths_still_load(make_ctx, agent_dir, tmp_path):
    write(agent_dir / "prompts" / "discovered.md", "Discovered.")
    write(tmp_path / "mine" / "explicit.md", "Explicit $1.")
    options = ResourceOptions(prompt_templates=False, prompt_template_paths=[tmp_path / "mine"])
    ctx = make_ctx(options=options)
    assert names(ctx) == ["explicit"]
    assert expand(ctx, "/explicit one") == "Explicit one."
    assert expand(ctx, "/discovered") == "/discovered"


def test_description_comes_from_frontmatter_or_the_first_line(make_ctx, agent_dir):
    write(agent_dir / "prompts" / "a.md", '---\ndescription: Review staged changes\nargument-hint: "<focus>"\n---\nBody')
    write(agent_dir / "prompts" / "b.md", "\n\n   Short first line\nsecond")
    write(agent_dir / "prompts" / "c.md", "x" * 70)
    commands = {c.name: c for c in commands_of(make_ctx())}
    assert (commands["a"].description, commands["a"].argument_hint) == ("Review staged changes", "<focus>")
    assert (commands["b"].description, commands["b"].argument_hint) == ("Short first line", None)
    assert commands["c"].description == "x" * 60 + "..."
    assert {c.source for c in commands.values()} == {"prompt"}


def test_bad_frontmatter_is_reported_and_the_template_skipped(make_ctx, agent_dir):
    write(agent_dir / "prompts" / "broken.md", "---\ndescription: [oops\n---\nBody")
    write(agent_dir / "prompts" / "fine.md", "Fine.")
    ctx = make_ctx()
    assert names(ctx) == ["fine"]
    [warning] = ctx.ui.warnings()
    assert warning.startswith(f"prompt templates: {agent_dir / 'prompts' / 'broken.md'}: invalid YAML frontmatter")
    assert warning.endswith("template not loaded")


def test_a_missing_template_path_is_reported(make_ctx, tmp_path):
    ctx = make_ctx(options=ResourceOptions(prompt_template_paths=[tmp_path / "gone.md"]))
    assert names(ctx) == []
    assert ctx.ui.warnings() == [f"prompt templates: {tmp_path / 'gone.md'}: prompt template path does not exist"]


def test_an_untrusted_project_keeps_its_templates_to_itself(make_ctx, agent_dir, project):
    write(project / ".pi" / "prompts" / "review.md", "Project review.")
    write(agent_dir / "prompts" / "global.md", "Global only.")
    assert names(make_ctx(trusted=False)) == ["global"]


def test_settings_patterns_choose_the_templates_as_for_skills(make_ctx, agent_dir):
    """A prompts list's glob chooses among the files its paths give, ``!`` leaves the
    agent dir's own ``prompts/`` files out, ``+path`` puts one back (pi's rules)."""
    for name in ("review", "release", "old"):
        write(agent_dir / "prompts" / f"{name}.md", f"{name} body")
    for name in ("fix", "feat"):
        write(agent_dir / "more" / f"{name}.md", f"{name} body")
    write(agent_dir / "settings.json", json.dumps({"prompts": ["more", "more/fi*", "!re*", "+prompts/release.md"]}))
    ctx = make_ctx()
    assert set(names(ctx)) == {"fix", "release", "old"}
    assert ctx.ui.warnings() == []
