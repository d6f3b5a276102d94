"""One agent dir for pi 1.6 and for us: packages the real pi 1.6 installed (it runs npm,
pointed at the local registry by ``npm_config_registry``) work unchanged here, ours work
unchanged in pi 1.6, and side by side the two send the same skills to the model and print
the same ``pi list``. pi runs with ``-ne``: its extensions would add tools and rules of
their own, which do not run here."""

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from support.llm_server import Reply
from support.npm_registry import FIXTURES, NpmRegistry
from support.programs import node_for, require_program, require_real

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


class Side:
    """An agent dir and project, and both programs run there."""

    def __init__(self, tmp_path: Path, server, registry: NpmRegistry) -> None:
        self.server = server
        self.agent, self.project = tmp_path / "agent", tmp_path / "proj"
        self.agent.mkdir()
        (self.project / ".pi" / "skills" / "proj-skill").mkdir(parents=True)
        (self.project / ".pi" / "skills" / "proj-skill" / "SKILL.md").write_text(
            "---\nname: proj-skill\ndescription: A project skill.\n---\nDo it.\n")
        (self.agent / "skills" / "user-skill").mkdir(parents=True)
        (self.agent / "skills" / "user-skill" / "SKILL.md").write_text(
            "---\nname: user-skill\ndescription: A user skill.\n---\nDo it.\n")
        models = server.models_json("local", apiKey="test-key")
        (self.agent / "models.json").write_text(json.dumps(models))
        self.env = {"PATH": __import__("os").environ["PATH"], "HOME": str(tmp_path / "home"),
                    "PI_CODING_AGENT_DIR": str(self.agent), "npm_config_registry": registry.url,
                    "npm_config_update_notifier": "false", "PYTHONUNBUFFERED": "1"}

    def pi16(self, *args: str) -> subprocess.CompletedProcess:
        package = require_real("pi16")
        return subprocess.run([node_for("pi16"), str(package / "dist" / "cli.js"), *args], cwd=self.project,
                              env=self.env, capture_output=True, text=True, timeout=180)

    def ours(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args], cwd=self.project, env=self.env,
                              capture_output=True, text=True, timeout=180)

    def skills_block(self, who: str) -> str:
        self.server.push(Reply(text="ok"))
        run = self.pi16 if who == "pi" else self.ours
        extra = ("-ne",) if who == "pi" else ()
        done = run("--model", "local/test-model", "--no-session", "-a", *extra, "-p", "Hi")
        assert done.returncode == 0, f"{who}: {done.stderr}"
        system = self.server.requests[-1].body["messages"][0]["content"]
        system = system if isinstance(system, str) else "".join(part["text"] for part in system)
        return re.search(r"<available_skills>.*</available_skills>", system, re.S).group(0)

    def add_by_hand(self, tarball: str) -> None:
        """A package pi installed whose dependency tree the local registry cannot serve
        (pi-subagents: 139 packages): unpacked where pi keeps it and listed as npm lists it."""
        root = self.agent / "npm"
        with tarfile.open(FIXTURES / tarball) as archive:
            manifest = json.load(archive.extractfile("package/package.json"))
            for member in archive.getmembers():
                member.name = member.name.partition("/")[2]
            archive.extractall(root / "node_modules" / manifest["name"],
                               members=[m for m in archive.getmembers() if m.name], filter="data")
        listed = json.loads((root / "package.json").read_text())
        listed.setdefault("dependencies", {})[manifest["name"]] = f"^{manifest['version']}"
        (root / "package.json").write_text(json.dumps(listed, indent=2) + "\n")
        settings = json.loads((self.agent / "settings.json").read_text())
        settings["packages"].append(f"npm:{manifest['name']}@{manifest['version']}")
        (self.agent / "settings.json").write_text(json.dumps(settings, indent=2))


@pytest.fixture
def registry():
    with NpmRegistry() as running:
        yield running


@pytest.fixture
def side(tmp_path, server, registry):
    require_program("npm", "pi 1.6 installs packages with npm")
    return Side(tmp_path, server, registry)


def _pi_list_part(out: str) -> str:
    """``pi list``'s packages part (ours adds the extensions that cannot run here after it)."""
    return out.split("\n\nPackage extensions that cannot run here")[0]


def test_an_agent_dir_pi16_installed_packages_in_works_unchanged_here(side):
    for source in ("npm:pi-themes", "npm:pi-prompt-template-model@0.12.2"):
        done = side.pi16("install", source)
        assert done.returncode == 0, done.stderr
    side.add_by_hand("pi-subagents-0.67.0.tgz")
    before = {p: p.stat().st_mtime_ns for p in side.agent.rglob("*") if p.is_file()}

    theirs, ours = side.pi16("list", "-a"), side.ours("list", "-a")
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert _pi_list_part(ours.stdout) == theirs.stdout.rstrip("\n")
    assert ours.stdout.count("cannot run here") == 1
    for label in ("pi-themes (index.ts)", "pi-prompt-template-model@0.12.2 (index.ts)", "pi-subagents@0.67.0 (index.ts)"):
        assert ours.stdout.count(label) == 1

    pis, ours_block = side.skills_block("pi"), side.skills_block("ours")
    assert ours_block == pis
    assert re.findall(r"<name>(.*?)</name>", pis) == [
        "proj-skill", "user-skill", "prompt-template-authoring", "council-mode", "pi-subagents"]
    assert "best-of-N compare flows.\n</description>" in pis
    after = {p: p.stat().st_mtime_ns for p in side.agent.rglob("*") if p.is_file() and p in before}
    assert after == before  # reading pi's agent dir changed nothing in it


def test_packages_we_install_work_unchanged_in_pi16(side):
    for source in ("npm:pi-themes", "npm:pi-prompt-template-model@0.12.2"):
        done = side.ours("install", source)
        assert done.returncode == 0, done.stderr
    theirs, ours = side.pi16("list"), side.ours("list")
    assert theirs.returncode == 0 and _pi_list_part(ours.stdout) == theirs.stdout.rstrip("\n")

    # pi loads the extensions too: their dependency tree is there, as npm lays it out.
    side.server.push(Reply(text="ok"))
    done = side.pi16("--model", "local/test-model", "--no-session", "-a", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    assert side.skills_block("pi") == side.skills_block("ours")

    # pi's next npm run keeps what we installed (npm prunes what package.json does not list).
    done = side.pi16("install", "npm:pi-themes@1.0.1")
    assert done.returncode == 0, done.stderr
    modules = sorted(p.name for p in (side.agent / "npm" / "node_modules").iterdir() if not p.name.startswith("."))
    assert modules == ["balanced-match", "brace-expansion", "minimatch", "pi-prompt-template-model", "pi-themes"]
    assert json.loads((side.agent / "settings.json").read_text())["packages"] == [
        "npm:pi-themes@1.0.1", "npm:pi-prompt-template-model@0.12.2"]

    # and ours removes what pi installed
    done = side.ours("remove", "npm:pi-prompt-template-model@0.12.2")
    assert done.returncode == 0, done.stderr
    assert side.pi16("list").stdout == "User packages:\n  npm:pi-themes@1.0.1\n" \
        f"    {side.agent}/npm/node_modules/pi-themes\n"


def test_git_packages_are_shared_with_pi16_both_ways(side, tmp_path):
    from support.git_server import GitServer, run_git

    require_program("git", "git packages are cloned with git")
    with GitServer(tmp_path / "git-server") as git_server:
        side.env.update(git_server.env)
        repo = git_server.repo("owner/pkg")
        skill = "---\nname: git-skill\ndescription: {}\n---\nDo it.\n"
        repo.commit({"package.json": json.dumps({"name": "pkg", "pi": {"skills": ["./skills"]}}),
                     "skills/git-skill/SKILL.md": skill.format("Version one.")}, tag="v1")
        v2 = repo.commit({"skills/git-skill/SKILL.md": skill.format("Version two.")}, tag="v2")
        clone = side.agent / "git" / "git.example.com" / "owner" / "pkg"

        done = side.pi16("install", "git:git.example.com/owner/pkg@v1")
        assert done.returncode == 0, done.stderr
        theirs, ours = side.pi16("list"), side.ours("list")
        assert ours.stdout == theirs.stdout == f"User packages:\n  git:git.example.com/owner/pkg@v1\n    {clone}\n"
        assert side.skills_block("ours") == side.skills_block("pi")

        # ours moves pi's clone to another ref, and pi reads what ours wrote
        done = side.ours("install", "git:git.example.com/owner/pkg@v2")
        assert done.returncode == 0, done.stderr
        assert run_git("rev-parse", "HEAD", cwd=clone) == v2
        assert side.pi16("list").stdout == f"User packages:\n  git:git.example.com/owner/pkg@v2\n    {clone}\n"
        assert "Version two." in side.skills_block("pi") == side.skills_block("ours")

        done = side.ours("remove", "git:git.example.com/owner/pkg")
        assert done.returncode == 0, done.stderr
        assert side.pi16("list").stdout == "No packages installed.\n"
        assert sorted(p.name for p in (side.agent / "git").iterdir()) == [".gitignore"]

        # and pi updates a clone ours made
        done = side.ours("install", "git:git.example.com/owner/pkg@v1")
        assert done.returncode == 0, done.stderr
        done = side.pi16("install", "git:git.example.com/owner/pkg")
        assert done.returncode == 0, done.stderr
        done = side.pi16("update", "--extensions")
        assert done.returncode == 0, done.stderr
        assert run_git("rev-parse", "HEAD", cwd=clone) == v2


def test_a_missing_package_is_installed_at_start_up_as_pi16_installs_it(side, tmp_path):
    """Both start with ``"packages": ["npm:pi-prompt-template-model@0.12.2"]`` and nothing
    on disk: each installs it before answering, to the same files."""
    (side.agent / "settings.json").write_text(json.dumps({"packages": ["npm:pi-prompt-template-model@0.12.2"]}))
    pi_block = side.skills_block("pi")
    pis = _npm_files(side.agent / "npm")
    import shutil

    shutil.rmtree(side.agent / "npm")
    ours_block = side.skills_block("ours")
    assert ours_block == pi_block and "prompt-template-authoring" in ours_block
    assert _npm_files(side.agent / "npm") == pis
    assert json.loads((side.agent / "settings.json").read_text()) == {
        "packages": ["npm:pi-prompt-template-model@0.12.2"]}


def _npm_files(root: Path) -> tuple[list[str], dict]:
    """The files under an npm root (npm's lock files aside) and its package.json."""
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                   and p.name not in ("package-lock.json", ".package-lock.json"))
    return files, json.loads((root / "package.json").read_text())


def _pi16_screen(side: Side, *args: str, until: str = "  Built-in", timeout: float = 60,
                 width: int = 100) -> list[str]:
    """pi 1.6's full-screen command drawn on an emulated ``width``x80 terminal: its lines
    once ``until`` shows; then Escape closes it."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios
    import time

    import pyte

    pid, fd = pty.fork()
    if pid == 0:  # the child: pi on the pty
        os.chdir(side.project)
        os.execve(node_for("pi16"), [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"), *args],
                  {**side.env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 80, width, 0, 0))
    screen = pyte.Screen(width, 80)
    stream = pyte.ByteStream(screen)
    deadline, seen = time.monotonic() + timeout, []
    try:
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                stream.feed(os.read(fd, 65536))
            seen = [line.rstrip() for line in screen.display]
            if any(line.startswith(until) for line in seen) and not select.select([fd], [], [], 0.5)[0]:
                break
        os.write(fd, b"\x1b")
    finally:
        time.sleep(0.3)
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
    return seen


def _package_groups(lines: list[str]) -> list[str]:
    """The package groups of a resource screen (cursor marks taken off)."""
    start = next(i for i, line in enumerate(lines) if line.endswith(("(user)", "(project)", "· inherited global")))
    rest = [("  " + line[2:] if line.startswith("> ") else line) for line in lines[start:]]
    end = next(i for i, line in enumerate(rest) if line.startswith(("  User (", "  Project (", "  Built-in")))
    return rest[:end]


def test_pi_config_lists_package_resources_as_pi16_does(side):
    """The package groups of pi 1.6's resource screen, global and the project's."""
    from .test_package_resources import unpack_into

    for tarball in ("pi-themes-1.0.1.tgz", "pi-prompt-template-model-0.12.2.tgz"):
        unpack_into(side.agent / "npm", tarball)
    (side.agent / "settings.json").write_text(json.dumps({"packages": [
        "npm:pi-themes", {"source": "npm:pi-prompt-template-model@0.12.2", "extensions": []}]}))
    (side.project / ".pi" / "settings.json").write_text(json.dumps({"packages": [
        {"source": "npm:pi-themes", "autoload": False, "themes": ["-themes/nord.json"]}]}))
    for args in (("config", "-na"), ("config", "-l", "-a")):
        theirs = _package_groups(_pi16_screen(side, *args))
        ours = side.ours(*args)
        assert ours.returncode == 0, ours.stderr
        assert _package_groups(ours.stdout.splitlines()) == theirs
        assert "      [x] prompt-template-authoring" in theirs[:5] + [t.split("  inherited")[0] for t in theirs]


def test_an_e_package_pi16_cached_is_used_here_and_sends_the_same_skills(side, registry):
    side.server.push(Reply(text="ok"))
    done = side.pi16("--model", "local/test-model", "--no-session", "-a", "-ne",
                     "-e", "npm:pi-prompt-template-model@0.12.2", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    theirs = side.server.requests[-1].body["messages"][0]["content"]
    registry.requests.clear()
    side.server.push(Reply(text="ok"))
    done = side.ours("--model", "local/test-model", "--no-session", "-a",
                     "-e", "npm:pi-prompt-template-model@0.12.2", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    assert "Installing" not in done.stderr and registry.requests == []  # pi's cache, pinned: not checked
    ours = side.server.requests[-1].body["messages"][0]["content"]
    block = re.compile(r"<available_skills>.*</available_skills>", re.S)
    assert block.search(str(ours)).group(0) == block.search(str(theirs)).group(0)
    assert not (side.agent / "settings.json").exists() or "packages" not in (side.agent / "settings.json").read_text()


def _own_groups(lines: list[str]) -> list[str]:
    """The groups of the user's and the project's own folders and settings paths (the
    packages' and the built-ins' left out: the built-ins differ by design)."""
    rest = [("  " + line[2:] if line.startswith("> ") else line) for line in lines]
    kept, keep = [], False
    for line in rest:
        if line.startswith("  ") and not line.startswith("   "):
            keep = line.startswith(("  User", "  Project"))
        elif not line.startswith("   "):
            keep = False
        if keep:
            kept.append(line)
    return kept


def test_pi_config_lists_the_users_and_the_projects_own_folders_as_pi16_does(side):
    """``User (<agent dir>/)``, ``User settings`` and (``-l``) ``Project (<project>/.pi/)``:
    their skills, prompts and themes by name, off where a settings pattern leaves them out."""
    agent, project = side.agent, side.project
    for folder, name in ((agent / "skills", "Beta"), (agent / "skills" / "group", "inner")):
        (folder / name).mkdir(parents=True)
        (folder / name / "SKILL.md").write_text(f"---\nname: {name.lower()}\ndescription: {name}.\n---\nx\n")
    (agent / "skills" / "loose.md").write_text("---\nname: loose\ndescription: Loose.\n---\nx\n")
    for base in (Path(side.env["HOME"]), project):  # User (~/.agents/), Project (<project>/.agents/)
        (base / ".agents" / "skills" / f"agents-{base.name}").mkdir(parents=True)
        (base / ".agents" / "skills" / f"agents-{base.name}" / "SKILL.md").write_text(
            f"---\nname: agents-{base.name}\ndescription: A.\n---\nx\n")
    (agent / "prompts" / "deeper").mkdir(parents=True)
    for name in ("review.md", "Ask.md", "b.md", "deeper/not-listed.md"):
        (agent / "prompts" / name).write_text("Do $1\n")
    (agent / "themes").mkdir()
    (agent / "themes" / "mine.json").write_text('{"name": "mine"}\n')
    extra = side.project.parent / "extra" / "skills" / "extra-skill"
    extra.mkdir(parents=True)
    (extra / "SKILL.md").write_text("---\nname: extra-skill\ndescription: Extra.\n---\nx\n")
    (agent / "settings.json").write_text(json.dumps({
        "skills": ["../extra/skills", "-skills/Beta/SKILL.md"], "prompts": ["!review.md"]}))
    for folder, name in ((project / ".pi" / "prompts", "fix.md"), (project / ".pi" / "themes", "proj.json")):
        folder.mkdir(parents=True)
        (folder / name).write_text('{"name": "proj"}\n' if name.endswith(".json") else "Fix\n")
    for args in (("config", "-na"), ("config", "-l", "-a")):
        theirs = _own_groups(_pi16_screen(side, *args, until="  Built-in" if "-na" in args else "  Project (",
                                          width=250))  # pi cuts lines at the width: the paths are long
        ours = side.ours(*args)
        assert ours.returncode == 0, ours.stderr
        assert _own_groups(ours.stdout.splitlines()) == theirs
    assert f"  User ({side.agent}/)" in theirs[0] and "      [ ] Beta  inherited global" in theirs
    assert "  Project (" in "\n".join(theirs) and "  User (~/.agents/) · inherited global" in theirs


def _cached_versions(agent: Path, name: str) -> list[str | None]:
    """The versions in the shared cache; a package.json still being written (npm writes it
    in place while the test polls) reads as not there yet."""
    versions = []
    for path in (agent / "tmp" / "extensions" / "npm").glob(f"*/node_modules/{name}/package.json"):
        try:
            versions.append(json.loads(path.read_text())["version"])
        except (OSError, ValueError, KeyError):
            versions.append(None)
    return versions


def _until(check, timeout: float, pump) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pump(0.2)
        if check():
            return True
    return False


def test_reload_refreshes_a_cached_e_package_in_pi16_and_here_in_the_same_cache(side, registry, monkeypatch):
    """pi 1.6's ``/reload`` installs the registry's newer version of an unpinned ``-e
    npm:`` package; ours does the same, in the cache the two share."""
    import asyncio
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios

    import pyte

    from pi_core.app.settings import Settings
    from pi_plugins.sdk import create_harness

    from .test_temporary_packages import republished_skill

    name = "pi-prompt-template-model"
    pid, fd = pty.fork()
    if pid == 0:  # the child: pi 1.6's chat on the pty
        os.chdir(side.project)
        os.execve(node_for("pi16"), [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                     "-a", "-ne", "-e", f"npm:{name}"], {**side.env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    screen = pyte.Screen(120, 50)
    stream = pyte.ByteStream(screen)

    def pump(seconds: float) -> None:
        if select.select([fd], [], [], seconds)[0]:
            with __import__("contextlib").suppress(OSError):
                stream.feed(os.read(fd, 65536))

    try:
        assert _until(lambda: "prompt-template-authoring" in "\n".join(screen.display), 90, pump), \
            "\n".join(screen.display)
        assert _cached_versions(side.agent, name) == ["0.12.2"]
        registry.add(f"{name}-0.12.3.tgz", republished_skill("0.12.3", "The newer skill."))
        os.write(fd, b"/reload")
        pump(0.5)
        os.write(fd, b"\r")
        assert _until(lambda: _cached_versions(side.agent, name) == ["0.12.3"], 90, pump), \
            "\n".join(screen.display)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)

    for key, value in side.env.items():  # ours, in this process, on the same agent dir
        monkeypatch.setenv(key, value)
    registry.add(f"{name}-0.12.4.tgz", republished_skill("0.12.4", "The newest skill."))
    settings = Settings.load(str(side.project), side.agent)
    settings.extension_sources = [f"npm:{name}"]

    async def reload_here() -> None:
        harness = await create_harness(model=side.server.model("openai-completions"), builtins=True,
                                       cwd=str(side.project), settings=settings)
        try:
            await harness.reload()
        finally:
            await harness.close()

    asyncio.run(reload_here())
    assert _cached_versions(side.agent, name) == ["0.12.4"]


def _group(lines: list[str], title: str) -> list[str]:
    """One group of a resource screen, its heading first (cursor marks taken off)."""
    rest = [("  " + line[2:] if line.startswith("> ") else line) for line in lines]
    start = rest.index(title)
    end = next((i for i, line in enumerate(rest[start + 1:], start + 1)
                if not line.startswith("    ")), len(rest))
    return rest[start:end]


def test_pi_config_l_shows_the_projects_overrides_of_your_own_files_as_pi16_does(side):
    """``[+]``/``[-]`` on your own skills, prompts and themes where the project's
    settings name them (absolute, from ``.pi``, from the agent dir; with the path itself
    a file moves to "Project settings"), and the built-ins the project switches."""
    agent = side.agent
    (agent / "skills" / "other").mkdir(parents=True)
    (agent / "skills" / "other" / "SKILL.md").write_text("---\nname: other\ndescription: O.\n---\nx\n")
    (agent / "prompts").mkdir()
    for name in ("review.md", "fix.md", "keep.md"):
        (agent / "prompts" / name).write_text("Do $1\n")
    (agent / "themes").mkdir()
    (agent / "themes" / "t1.json").write_text('{"name": "t1"}\n')
    (agent / "settings.json").write_text(json.dumps({"prompts": ["-prompts/fix.md"], "extensions": ["-builtin:mcp"]}))
    (side.project / ".pi" / "settings.json").write_text(json.dumps({
        "skills": [f"-{agent}/skills/user-skill/SKILL.md", "+skills/other/SKILL.md"],
        "prompts": ["-prompts/review.md", f"{agent}/prompts/fix.md", f"+{agent}/prompts/fix.md"],
        "themes": [f"-{os.path.relpath(agent / 'themes' / 't1.json', side.project / '.pi')}"],
        "extensions": ["+builtin:mcp", "-builtin:codemode"]}))
    theirs = _pi16_screen(side, "config", "-l", "-a", until="  Project settings", width=250)
    ours = side.ours("config", "-l", "-a")
    assert ours.returncode == 0, ours.stderr
    assert _own_groups(ours.stdout.splitlines()) == _own_groups(theirs)
    assert _group(ours.stdout.splitlines(), "  Built-in (project override)") == \
        _group(theirs, "  Built-in (project override)")
    assert "      [-] user-skill  project unload" in theirs and "      [+] fix.md  project load" in theirs


def test_a_projects_lone_minus_path_of_your_own_skill_sends_what_pi16_sends(side):
    """The project's ``-path`` of a skill your agent dir finds by itself: pi 1.6's screen
    marks it ``[-]``, and the skills block shows what its loader makes of it; ours sends
    the same block."""
    (side.project / ".pi" / "settings.json").write_text(json.dumps({
        "skills": [f"-{side.agent}/skills/user-skill/SKILL.md"]}))
    theirs = side.skills_block("pi")
    assert side.skills_block("ours") == theirs
    assert "proj-skill" in theirs
