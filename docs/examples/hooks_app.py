"""Hooks the application shell asks its feature plugins: project trust, settings
problems, sign-ins. The built-in plugins ``trust``, ``keys`` and ``signin`` answer them;
a plugin of yours may answer instead (and ``plugins.disabled`` may drop the built-in).

Run as a script (python docs/examples/hooks_app.py), it asks these hooks the way
``pi`` does at start-up and when a sign-in is needed.
"""

import asyncio
from pathlib import Path
from types import SimpleNamespace

from pi_core import hookimpl


@hookimpl
def decide_project_trust(event, ctx):
    # Trust every folder under ~/work, nothing else. Without an answer (or when this
    # raises) the shell treats the project as untrusted: its .pi resources do not load.
    trusted = event.approve if event.approve is not None else \
        event.cwd.startswith(str(Path.home() / "work"))
    return SimpleNamespace(trusted=trusted, problems=[], settled=True,
                           notice=None if trusted else f"{event.cwd}: not trusted, .pi skipped")


@hookimpl
def settings_problems(settings, ctx):
    # Checked at start-up; pi prints each line as "warning: ...".
    if not isinstance(settings.get("greeting", ""), str):
        return '"greeting" must be a string; it is ignored'
    return None


class EchoSignIn:
    """A sign-in for the provider "echo": the flow auth.json's store runs and refreshes."""

    id, name = "echo", "Echo (demo)"

    async def login(self, callbacks, **options):
        return {"refresh": "r1", "access": "token-1", "expires": 0}

    async def refresh(self, credentials):
        return {**credentials, "access": "token-2", "expires": 2**53}

    def api_key(self, credentials):
        return credentials["access"]


@hookimpl
def register_sign_ins(ctx):
    return [EchoSignIn()]


async def ask_by_hand(folder: Path) -> None:
    """What the shell does with these hooks."""
    import sys

    from pi_core import AuthStorage, Plugins, Settings, TrustQuestion

    plugins = Plugins()
    plugins.register(sys.modules[__name__])
    for cwd in (Path.home() / "work" / "app", Path("/tmp/cloned")):
        question = TrustQuestion(cwd, folder, quiet=False)
        decision = await plugins.call("decide_project_trust", event=question, ctx=None)
        print(f"decide_project_trust {cwd.name}: trusted={decision.trusted} notice={decision.notice}")
    print("settings_problems:", await plugins.call("settings_problems", settings=Settings({"greeting": 3}),
                                                   ctx=None))
    flows = {flow.id: flow for flow in await plugins.call("register_sign_ins", ctx=None)}
    store = AuthStorage(folder / "auth.json", sign_ins=flows)
    await store.login("echo", callbacks=None)
    print("after login:", store.api_key("echo"), "(expired)" if store.needs_refresh("echo") else "")
    print("refreshed:", await store.refreshed_key("echo"))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as agent_dir:
        asyncio.run(ask_by_hand(Path(agent_dir)))
