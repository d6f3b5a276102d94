"""The execution environment is the tools' only door to files and processes: a plugin
that replaces it sees every call, and tools work on whatever it serves."""

import asyncio
import errno
import posixpath

import pi_plugins.tools
from support.tool_helpers import EnvironmentPlugin, call, text_of
from pi_core import Agent, Plugins
from pi_core.protocol.messages import ToolResultMessage
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins.tools.environment import (
    DirEntry,
    ExecutionEnvironment,
    FileInfo,
    LocalEnvironment,
    OutputSink,
)


class MemoryEnvironment(ExecutionEnvironment):
    """Files in a dict, no processes: nothing on this machine's disk is touched."""

    def __init__(self, files: dict[str, str], cwd: str = "/project"):
        self.cwd, self.home = cwd, "/home/model"
        self.files = {posixpath.join(cwd, k): v.encode() for k, v in files.items()}
        self.dirs = {"/", cwd}

    def _all_dirs(self) -> set[str]:
        found = set(self.dirs)
        for path in self.files:
            while (path := posixpath.dirname(path)) not in found:
                found.add(path)
        return found

    @staticmethod
    def _missing(path):
        return FileNotFoundError(errno.ENOENT, "No such file or directory", path)

    async def stat(self, path):
        if path in self.files:
            return FileInfo(path, "file", len(self.files[path]))
        if path in self._all_dirs():
            return FileInfo(path, "directory", 0)
        raise self._missing(path)

    async def read_bytes(self, path, offset=0, size=None):
        if path in self._all_dirs():
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if path not in self.files:
            raise self._missing(path)
        data = self.files[path]
        return data[offset:] if size is None else data[offset : offset + size]

    async def write_bytes(self, path, data):
        if posixpath.dirname(path) not in self._all_dirs():
            raise self._missing(path)
        self.files[path] = data

    async def make_dirs(self, path):
        while path not in self.dirs:
            self.dirs.add(path)
            path = posixpath.dirname(path)

    async def list_dir(self, path):
        if path not in self._all_dirs():
            raise self._missing(path)
        dirs = {d for d in self._all_dirs() if posixpath.dirname(d) == path and d != path}
        files = {f for f in self.files if posixpath.dirname(f) == path}
        return [DirEntry(posixpath.basename(d), "directory") for d in dirs] + [
            DirEntry(posixpath.basename(f), "file") for f in files
        ]

    async def which(self, program):
        return None

    async def spawn(self, argv, *, cwd=None, env=None, merge_stderr=True):
        raise PermissionError(errno.EPERM, "this environment runs no processes", argv[0])

    async def open_output_file(self, prefix):
        raise PermissionError(errno.EPERM, "no temp files here", prefix)


class RecordingEnvironment(ExecutionEnvironment):
    """Passes every call on to ``inner`` and writes it down first."""

    def __init__(self, inner: ExecutionEnvironment):
        self.inner, self.cwd, self.home = inner, inner.cwd, inner.home
        self.calls: list[tuple] = []

    async def stat(self, path):
        self.calls.append(("stat", path))
        return await self.inner.stat(path)

    async def read_bytes(self, path, offset=0, size=None):
        self.calls.append(("read_bytes", path))
        return await self.inner.read_bytes(path, offset, size)

    async def write_bytes(self, path, data):
        self.calls.append(("write_bytes", path))
        return await self.inner.write_bytes(path, data)

    async def make_dirs(self, path):
        self.calls.append(("make_dirs", path))
        return await self.inner.make_dirs(path)

    async def list_dir(self, path):
        self.calls.append(("list_dir", path))
        return await self.inner.list_dir(path)

    async def which(self, program):
        self.calls.append(("which", program))
        return await self.inner.which(program)

    async def spawn(self, argv, *, cwd=None, env=None, merge_stderr=True):
        self.calls.append(("spawn", tuple(argv)))
        return await self.inner.spawn(argv, cwd=cwd, env=env, merge_stderr=merge_stderr)

    async def open_output_file(self, prefix) -> OutputSink:
        self.calls.append(("open_output_file", prefix))
        return await self.inner.open_output_file(prefix)

    def kinds(self) -> set[str]:
        return {c[0] for c in self.calls}


def run_agent(plugins: Plugins, replies: list[Reply], cwd: str = "."):
    provider = ScriptedProvider(replies)
    plugins.register(provider)
    agent = Agent(model=scripted_model(), plugins=plugins, cwd=cwd)
    agent.set_active_tools(pi_plugins.tools.ALL_TOOLS)  # grep, find and ls are off by default
    messages = asyncio.run(agent.prompt("go"))
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}, [
        m for m in messages if isinstance(m, ToolResultMessage)
    ]


def test_a_replacement_environment_serves_and_records_every_file_tool(tmp_path):
    memory = MemoryEnvironment({"notes.txt": "status: draft\n", "src/app.py": "print('hi')\n"})
    recorder = RecordingEnvironment(memory)
    plugins = Plugins()
    plugins.register(pi_plugins.tools)
    plugins.register(EnvironmentPlugin(recorder))
    calls = [
        ("read", {"path": "notes.txt"}),
        ("edit", {"path": "notes.txt", "edits": [{"oldText": "draft", "newText": "final"}]}),
        ("write", {"path": "out/summary.md", "content": "done\n"}),
        ("ls", {}),
        ("find", {"pattern": "*.py"}),
        ("grep", {"pattern": "hi"}),
        ("bash", {"command": "echo hello"}),
    ]
    _, results = run_agent(plugins, [Reply(tool_calls=[c]) for c in calls] + [Reply(text="done")], cwd=str(tmp_path))
    texts = [text_of(r) for r in results]
    assert texts[0] == "status: draft\n"
    assert memory.files["/project/notes.txt"] == b"status: final\n"
    assert memory.files["/project/out/summary.md"] == b"done\n"
    assert texts[3].splitlines() == ["notes.txt", "out/", "src/"]
    assert texts[4] == "src/app.py"
    assert texts[5] == "src/app.py:1: print('hi')"
    assert results[6].is_error and "runs no processes" in texts[6]
    assert ("spawn", ("sh", "-c", "echo hello")) in recorder.calls
    assert {"stat", "read_bytes", "write_bytes", "make_dirs", "list_dir", "which", "spawn"} <= recorder.kinds()
    assert list(tmp_path.iterdir()) == []  # the real working directory was never touched


def test_bash_and_its_output_file_go_through_the_environment(ws):
    recorder = RecordingEnvironment(LocalEnvironment(str(ws)))
    result = call("bash", {"command": "seq 1 20000"}, ws, env=recorder)
    assert [c[0] for c in recorder.calls] == ["which", "spawn", "open_output_file"]
    assert result.details["fullOutputPath"].startswith("/")


def test_the_last_plugin_environment_wins(ws):
    first = RecordingEnvironment(LocalEnvironment(str(ws)))
    second = RecordingEnvironment(LocalEnvironment(str(ws)))
    plugins = Plugins()
    plugins.register(pi_plugins.tools)
    plugins.register(EnvironmentPlugin(first), "first")
    plugins.register(EnvironmentPlugin(second), "second")
    (ws / "a.txt").write_text("a\n")
    by_id, _ = run_agent(plugins, [Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="ok")], cwd=str(ws))
    assert first.calls == [] and second.calls


def test_without_a_plugin_the_tools_use_the_harness_working_directory(ws):
    (ws / "here.txt").write_text("local\n")
    plugins = Plugins()
    plugins.register(pi_plugins.tools)
    _, results = run_agent(plugins, [Reply(tool_calls=[("read", {"path": "here.txt"})]), Reply(text="ok")], cwd=str(ws))
    assert text_of(results[0]) == "local\n"


# ---------------------------------------------------------------- keys (issue 31)


def test_every_command_starts_without_the_key_variables_and_their_values_are_redacted(tmp_path, monkeypatch):
    import asyncio
    from types import SimpleNamespace

    from pi_core.app.settings import Settings
    from pi_plugins.tools.environment import LocalEnvironment

    monkeypatch.setenv("Some_Api_Key", "value-of-the-api-key")  # the patterns ignore case
    monkeypatch.setenv("GH_TOKEN", "ghp_0123456789")
    monkeypatch.setenv("HARMLESS", "stays-here")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")  # short: left in ordinary text
    owner = SimpleNamespace(settings=Settings({"toolEnvironment": {"include": ["GH_*"]}}))
    env = LocalEnvironment(str(tmp_path), owner=owner)
    result = asyncio.run(env.run("env | sort; echo false; printenv GH_TOKEN", merge_stderr=False))
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    assert "HARMLESS" in names and "GH_TOKEN" in names
    assert not names & {"Some_Api_Key", "TOKENIZERS_PARALLELISM"}
    assert result.output.endswith("false\n[redacted: GH_TOKEN]\n")
    assert "ghp_0123456789" not in result.output


def test_a_shell_path_starting_with_a_tilde_is_under_the_home_directory(tmp_path, monkeypatch):
    # pi 1.6's shellPath "supports a leading ~"
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    shell = home / "bin" / "myshell"
    shell.write_text('#!/bin/sh\necho "myshell ran: $2"\n')
    shell.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    result = asyncio.run(LocalEnvironment(str(tmp_path)).run("echo hi", shell="~/bin/myshell"))
    assert result.exit_code == 0 and result.output.strip() == "myshell ran: echo hi"
