"""``pi -e npm:NAME`` and ``-e git:…`` load a package for one run, as pi 1.6 does: cached
under ``<agent dir>/tmp/extensions/`` where pi 1.6 caches it (the same hashed folders),
never written to settings.json, checked on every start (an unpinned npm package follows
the registry, a git clone its branch), the cached copy kept when the check fails or pi
is offline; its skills come before every other."""

import gzip
import io
import json
import tarfile

import pytest

from pi_core.app.settings import Settings
from pi_plugins.packages.startup_install import install_missing
from support.cli import PiRunner
from support.llm_server import Reply
from support.npm_registry import FIXTURES

#: Where pi 1.6 keeps every ``-e`` npm package (sha256 of "npm-", as pi 1.6 names it).
NPM_CACHE = ("tmp", "extensions", "npm", "f35b2129")


def start(home, *extension_sources, env=None):
    """What a start with these ``-e`` sources does: (lines announced, warnings)."""
    said = []
    settings = Settings.load(str(home.project), home.agent)
    settings.extension_sources = list(extension_sources)
    warnings = install_missing(settings, env=env or {}, say=said.append)
    return said, warnings


def cached(home, name):
    return home.agent.joinpath(*NPM_CACHE, "node_modules", name)


def republished(version: str) -> bytes:
    """pi-themes' real tarball with another version in its package.json."""
    source = tarfile.open(FIXTURES / "pi-themes-1.0.1.tgz")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name == "package/package.json":
                manifest = json.loads(data)
                manifest["version"] = version
                data = json.dumps(manifest).encode()
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    return gzip.compress(out.getvalue())


def test_an_npm_package_is_cached_where_pi_keeps_it_and_settings_are_not_touched(home, registry):
    assert start(home, "npm:pi-themes") == (["Installing npm:pi-themes..."], [])
    assert (cached(home, "pi-themes") / "themes").is_dir()
    assert not (home.agent / "settings.json").exists() and not (home.agent / "npm").exists()
    registry.requests.clear()
    assert start(home, "npm:pi-themes") == ([], [])  # cached: only the registry's newest is asked
    assert all(not path.endswith(".tgz") for path in registry.requests)


def test_an_unpinned_package_follows_the_registry_and_a_pinned_one_is_not_checked(home, registry):
    assert start(home, "npm:pi-themes") == (["Installing npm:pi-themes..."], [])
    registry.add("pi-themes-1.0.2.tgz", republished("1.0.2"))
    assert start(home, "npm:pi-themes") == ([], [])
    assert json.loads((cached(home, "pi-themes") / "package.json").read_text())["version"] == "1.0.2"

    registry.requests.clear()
    assert start(home, "npm:pi-themes@1.0.2") == ([], [])
    assert registry.requests == []  # an exact version is not checked


def test_offline_loads_the_cached_copy_and_installs_nothing(home, registry):
    assert start(home, "npm:pi-themes", env={"PI_OFFLINE": "1"}) == ([], [])
    assert not cached(home, "pi-themes").exists()
    start(home, "npm:pi-themes")
    registry.requests.clear()
    assert start(home, "npm:pi-themes", env={"PI_OFFLINE": "1"}) == ([], [])
    assert registry.requests == []


def test_a_package_that_cannot_be_installed_says_to_check_the_source(home, registry):
    said, warnings = start(home, "npm:no-such-package")
    assert said == ["Installing npm:no-such-package..."]
    assert warnings == ['Extension package "npm:no-such-package": failed to install (npm package no-such-package '
                        f'not found in the registry {registry.url}). Check the source and try again.']


def test_a_git_package_is_cloned_per_ref_and_refreshed_unless_its_commit_is_checked_out(home, git_server):
    from support.git_server import run_git

    repo = git_server.repo("owner/pkg")
    first = repo.commit({"skills/s/SKILL.md": "---\nname: s\ndescription: S.\n---\nx\n"})
    assert start(home, "git:git.example.com/owner/pkg") == (["Installing git:git.example.com/owner/pkg..."], [])
    clone = home.agent / "tmp" / "extensions" / "git-git.example.com"
    [hashed] = list(clone.iterdir())
    clone = hashed / "owner" / "pkg"
    assert run_git("rev-parse", "HEAD", cwd=clone) == first

    second = repo.commit({"skills/s/SKILL.md": "---\nname: s\ndescription: Later.\n---\nx\n"})
    assert start(home, "git:git.example.com/owner/pkg") == (["Refreshing git:git.example.com/owner/pkg..."], [])
    assert run_git("rev-parse", "HEAD", cwd=clone) == second

    pinned = f"git:git.example.com/owner/pkg@{first[:12]}"
    assert start(home, pinned) == ([f"Installing {pinned}..."], [])
    assert start(home, pinned) == ([], [])  # that commit is checked out: no fetch
    assert not (home.agent / "settings.json").exists()


@pytest.mark.process
def test_e_npm_sends_the_packages_skill_first_and_pi_16_finds_the_same_cache(tmp_path, server, registry):
    pi = PiRunner(tmp_path, server)
    pi.env["npm_config_registry"] = registry.url
    skill = pi.agent_dir / "skills" / "mine" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: mine\ndescription: Mine.\n---\nx\n")
    server.push(Reply(text="ok"))
    done = pi.run("--no-session", "--no-skills", "-e", "npm:pi-prompt-template-model", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    assert "Installing npm:pi-prompt-template-model...\n" in done.stderr
    assert "cannot run here" not in done.stderr and "Traceback" not in done.stderr
    system = server.requests[-1].body["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(part["text"] for part in system)
    location = pi.agent_dir.joinpath(*NPM_CACHE, "node_modules", "pi-prompt-template-model", "skills",
                                     "prompt-template-authoring", "SKILL.md")
    assert f"<location>{location}</location>" in system  # even with --no-skills, as pi
    assert "<name>mine</name>" not in system
    assert not (pi.agent_dir / "settings.json").exists()


PLUGIN = '''from pi_core import hookimpl, tool


@tool(parameters={"type": "object", "properties": {}})
def marker_tool(args, run):
    """Marks the run."""
    return "ok"


@hookimpl
def register_tools():
    return [marker_tool]
'''


@pytest.mark.process
@pytest.mark.parametrize("switched_off_by", ["settings", "-e"])
def test_without_the_packages_builtin_e_packages_are_named_once_and_the_plugins_still_load(
        tmp_path, server, registry, switched_off_by):
    """With ``-builtin:packages`` (in the settings, or ``-e -builtin:packages``),
    ``-e npm:NAME`` and ``-e ./folder`` cannot load: one line on stderr says why; a Python
    plugin given with ``-e`` beside them still loads."""
    pi = PiRunner(tmp_path, server)
    pi.env["npm_config_registry"] = registry.url
    switch = ["-e", "-builtin:packages"] if switched_off_by == "-e" else []
    if not switch:
        (pi.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:packages"]}))
    (pi.cwd / "folder").mkdir()
    (pi.cwd / "folder" / "package.json").write_text('{"name": "folder", "pi": {"skills": ["skills"]}}')
    (pi.cwd / "folder" / "skills" / "folder-skill").mkdir(parents=True)
    (pi.cwd / "folder" / "skills" / "folder-skill" / "SKILL.md").write_text(
        "---\nname: folder-skill\ndescription: F.\n---\nx\n")
    (pi.cwd / "marker.py").write_text(PLUGIN)
    server.push(Reply(text="ok"))
    done = pi.run("--no-session", *switch, "-e", "npm:pi-themes", "-e", "./folder", "-e", "./marker.py", "-p", "Hi")
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    assert [line for line in done.stderr.splitlines() if "npm:pi-themes" in line] == [
        "warning: -e npm:pi-themes, -e ./folder: pi packages need the packages built-in, which is not "
        "loaded (-builtin:packages in the settings' extensions or on -e, or plugins.disabled); skipped"]
    assert "marker_tool" in [t["function"]["name"] for t in server.requests[-1].body["tools"]]
    assert registry.requests == [] and not (pi.agent_dir / "tmp").exists()
    assert "folder-skill" not in json.dumps(server.requests[-1].body["messages"][0])


def republished_skill(version: str, words: str) -> bytes:
    """pi-prompt-template-model's real tarball as ``version``, its skill described by ``words``."""
    source = tarfile.open(FIXTURES / "pi-prompt-template-model-0.12.2.tgz")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name == "package/package.json":
                data = json.dumps({**json.loads(data), "version": version}).encode()
            elif member.name == "package/skills/prompt-template-authoring/SKILL.md":
                data = f"---\nname: prompt-template-authoring\ndescription: {words}\n---\nx\n".encode()
            if data is not None:
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    return gzip.compress(out.getvalue())


def test_reload_refreshes_a_cached_e_package_and_the_next_prompt_has_its_new_skill(home, registry, server):
    """As pi 1.6 on ``/reload``: an unpinned ``-e npm:`` package the registry has a newer
    version of is installed again, and the skills are read again from it."""
    import asyncio

    from pi_plugins.sdk import create_harness

    settings = Settings.load(str(home.project), home.agent)
    settings.extension_sources = ["npm:pi-prompt-template-model"]

    async def scenario():
        harness = await create_harness(model=server.model("openai-completions"), builtins=True,
                                       cwd=str(home.project), settings=settings)
        try:
            server.push(Reply(text="ok"))
            await harness.prompt("Hi")
            before = json.dumps(server.requests[-1].body["messages"][0])
            registry.add("pi-prompt-template-model-0.12.3.tgz", republished_skill("0.12.3", "The newer skill."))
            await harness.reload()
            server.push(Reply(text="ok"))
            await harness.prompt("Hi again")
            return before, json.dumps(server.requests[-1].body["messages"][0])
        finally:
            await harness.close()

    before, after = asyncio.run(scenario())
    assert "prompt-template-authoring" in before and "The newer skill." not in before
    assert "<description>The newer skill.</description>" in after
    manifest = cached(home, "pi-prompt-template-model") / "package.json"
    assert json.loads(manifest.read_text())["version"] == "0.12.3"
    assert not (home.agent / "settings.json").exists()
