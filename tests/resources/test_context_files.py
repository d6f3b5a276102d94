"""Context files: AGENTS.md (or CLAUDE.md) from the agent dir, then from the root down
to the cwd, one per directory."""

from pi_core.protocol.options import ResourceOptions
from pi_plugins import context_files, resources

from support.agents import run
from support.resources import system_prompt_of, write


def files_of(ctx, under):
    """The context files found for ``ctx`` that lie under ``under`` (the temp dir), so a
    stray file above it on this machine cannot disturb the test."""
    found = run(context_files.load(ctx)).files
    return [f.path.relative_to(under).as_posix() for f in found if under in f.path.parents]


def test_agent_dir_file_comes_first_then_every_ancestor_from_the_root_down(make_ctx, tmp_path, agent_dir, project):
    write(agent_dir / "AGENTS.md", "global rules")
    write(tmp_path / "root" / "AGENTS.md", "root rules")
    write(tmp_path / "root" / "repo" / "CLAUDE.md", "repo rules")
    write(project / "AGENTS.md", "app rules")
    ctx = make_ctx()
    assert files_of(ctx, tmp_path) == ["agent/AGENTS.md", "root/AGENTS.md", "root/repo/CLAUDE.md",
                                       "root/repo/app/AGENTS.md"]
    prompt = system_prompt_of(ctx)
    order = [prompt.index(f"## {path}\n\n{text}") for path, text in [
        (agent_dir / "AGENTS.md", "global rules"), (tmp_path / "root" / "AGENTS.md", "root rules"),
        (tmp_path / "root" / "repo" / "CLAUDE.md", "repo rules"), (project / "AGENTS.md", "app rules"),
    ]]
    assert order == sorted(order)


def test_agents_md_wins_over_claude_md_in_the_same_directory(make_ctx, tmp_path, project):
    write(project / "AGENTS.md", "use me")
    write(project / "CLAUDE.md", "not me")
    prompt = system_prompt_of(make_ctx())
    assert "use me" in prompt and "not me" not in prompt
    assert files_of(make_ctx(), tmp_path) == ["root/repo/app/AGENTS.md"]


def test_no_context_files_option_leaves_them_out(make_ctx, agent_dir, project):
    write(agent_dir / "AGENTS.md", "global rules")
    write(project / "AGENTS.md", "app rules")
    prompt = system_prompt_of(make_ctx(options=ResourceOptions(context_files=False)))
    assert "# Project Context" not in prompt and "rules" not in prompt


def test_an_unreadable_context_file_is_reported_and_the_next_candidate_is_used(make_ctx, project):
    (project / "AGENTS.md").write_bytes(b"\xff\xfe not utf-8 \xff")
    write(project / "CLAUDE.md", "fallback rules")
    ctx = make_ctx()
    assert "fallback rules" in system_prompt_of(ctx)
    [warning] = ctx.ui.warnings()
    assert warning.startswith(f"context files: {project / 'AGENTS.md'}: cannot be read")


def test_an_agent_dir_among_the_ancestors_is_listed_once(make_ctx, tmp_path, project):
    write(tmp_path / "root" / "AGENTS.md", "root rules")
    ctx = make_ctx()
    ctx.agent_dir = tmp_path / "root"
    assert files_of(ctx, tmp_path) == ["root/AGENTS.md"]


def test_context_files_are_read_once_per_run_until_reloaded(make_ctx, project):
    write(project / "AGENTS.md", "first version")
    ctx = make_ctx()
    assert "first version" in system_prompt_of(ctx)
    write(project / "AGENTS.md", "second version")
    assert "first version" in system_prompt_of(ctx)
    resources.reload(ctx)
    assert "second version" in system_prompt_of(ctx)


def test_a_new_cwd_finds_its_own_context_files(make_ctx, tmp_path, project):
    write(project / "AGENTS.md", "app rules")
    other = tmp_path / "elsewhere"
    write(other / "AGENTS.md", "other rules")
    ctx = make_ctx()
    assert "app rules" in system_prompt_of(ctx)
    ctx.cwd = str(other)
    prompt = system_prompt_of(ctx)
    assert "other rules" in prompt and "app rules" not in prompt


def test_agents_override_md_replaces_the_files_of_its_own_directory_only(make_ctx, tmp_path, agent_dir, project):
    write(agent_dir / "AGENTS.md", "global rules")
    write(tmp_path / "root" / "repo" / "AGENTS.md", "repo rules")
    write(project / "AGENTS.md", "plain app rules")
    write(project / "CLAUDE.md", "claude app rules")
    write(project / "AGENTS.override.md", "override app rules")
    assert files_of(make_ctx(), tmp_path) == ["agent/AGENTS.md", "root/repo/AGENTS.md",
                                              "root/repo/app/AGENTS.override.md"]
    prompt = system_prompt_of(make_ctx())
    assert "override app rules" in prompt and "plain app rules" not in prompt and "claude" not in prompt
