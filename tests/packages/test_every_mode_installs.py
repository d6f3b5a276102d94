"""The pi packages settings.json lists but the disk lacks are installed in every mode, as
pi 1.6 does: the one assembly asks ``settings_problems`` once per settings object, so
``pi serve``, ``pi batch`` and the SDK get what ``pi`` gets; harnesses assembled again on
the same settings (a second harness, a subagent) do not ask again; serve: tests/serve/test_package_startup.py."""

import asyncio
import json

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
