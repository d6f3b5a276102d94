"""Fixtures for the resource plugins: a fake HOME, an agent dir and a project tree in a
temp dir, and a ``ctx`` wired to a Plugins registry holding the resource plugins."""

import pytest

from pi_core import Agent, Plugins
from pi_core.context import Context
from pi_core.protocol.options import ResourceOptions
from pi_core.app.settings import Settings
from pi_core.testing import scripted_model

from support.resources import RESOURCE_PLUGINS, RecordingUI


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake HOME, so ``~/.agents/skills`` is ours."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def agent_dir(tmp_path, monkeypatch):
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    return folder


@pytest.fixture
def project(tmp_path):
    """The cwd: ``<tmp>/root/repo/app``."""
    folder = tmp_path / "root" / "repo" / "app"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def make_ctx(home, agent_dir, project):
    """``make_ctx(options=..., tools=..., plugins=...)``: a ctx for ``project`` whose
    registry holds the given plugin modules (the resource plugins by default) and, when
    ``tools`` is given, an agent offering them. The project is trusted (as after
    ``--approve``) unless ``trusted=False``: its ``.pi`` resources load."""

    def make(*, options=None, tools=None, plugins=RESOURCE_PLUGINS, cwd=None, extra=(), trusted=True):
        registry = Plugins()
        for plugin in plugins:
            registry.register(plugin)
        for plugin in extra:
            registry.register(plugin)
        cwd = str(cwd or project)
        ctx = Context(
            cwd=cwd, plugins=registry, ui=RecordingUI(has_ui=False), agent_dir=agent_dir,
            settings=Settings.load(cwd, agent_dir, project_trusted=trusted), options=options or ResourceOptions(),
        )
        if tools is not None:
            Agent(model=scripted_model(), plugins=registry, tools=list(tools), ctx=ctx)
        return ctx

    return make
