"""The pi packages settings.json lists but the disk lacks are installed in every mode, as
pi 1.6 does: the one assembly asks ``settings_problems`` once per settings object, so
``pi batch`` and the SDK get what ``pi`` gets (``pi serve`` installs in the background:
tests/serve/test_package_startup.py); harnesses assembled again on the same settings (a
second harness, a subagent, the other tasks of a batch) do not ask again."""

import asyncio
import json

import pytest

from pi_core.app.settings import Settings


def themes_installed(agent):
    return (agent / "npm" / "node_modules" / "pi-themes" / "themes").is_dir()


def test_the_sdk_installs_a_missing_package_once_per_settings(home, registry, server, capfd):
    from pi_plugins.sdk import create_harness

    (home.agent / "settings.json").write_text(json.dumps({"packages": ["npm:pi-themes", "npm:no-such-package"]}))
    settings = Settings.load(str(home.project), home.agent)

    async def scenario():
        first = await create_harness(model=server.model("openai-completions"), builtins=True,
                                     cwd=str(home.project), settings=settings)
        await first.close()
        registry.requests.clear()
        second = await create_harness(model=server.model("openai-completions"), builtins=True,
                                      cwd=str(home.project), settings=settings)
        await second.close()

    asyncio.run(scenario())
    assert themes_installed(home.agent)
    assert registry.requests == []  # the second harness did not look again
    err = capfd.readouterr().err
    assert "Installing npm:pi-themes...\n" in err
    assert err.count('warning: Extension package "npm:no-such-package": failed to install') == 1
    assert any("no-such-package" in p for p in settings.problems)


@pytest.mark.process
def test_pi_batch_installs_a_missing_package_once_and_every_task_has_its_skill(tmp_path, registry, server):
    """Four tasks at once: one install, announced once, before any task's first request."""
    import os
    import subprocess
    import sys

    from support.llm_server import Reply

    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local")))
    (agent / "settings.json").write_text(json.dumps({"packages": ["npm:pi-prompt-template-model@0.12.2"]}))
    rows = [{"id": f"t{n}", "prompt": f"task {n}", "cwd": str(project), "model": "local/test-model"}
            for n in range(4)]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    server.default = lambda request: Reply(text="ok")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "PI_CODING_AGENT_DIR": str(agent), "PYTHONUNBUFFERED": "1", "npm_config_registry": registry.url}
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "batch", str(tmp_path / "tasks.jsonl"),
                           "--out", str(tmp_path / "out.jsonl"), "--concurrency", "4"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("Installing npm:pi-prompt-template-model@0.12.2...\n") == 1
    tarballs = [path for path in registry.requests if path.endswith(".tgz")]
    assert "pi-prompt-template-model/-/pi-prompt-template-model-0.12.2.tgz" in tarballs
    assert len(tarballs) == len(set(tarballs))  # each fetched once: the tasks did not install it again
    assert len(server.requests) == 4
    for request in server.requests:
        assert "<name>prompt-template-authoring</name>" in json.dumps(request.body["messages"][0])
    assert json.loads((agent / "settings.json").read_text()) == {"packages": ["npm:pi-prompt-template-model@0.12.2"]}
