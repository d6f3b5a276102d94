"""pi 1.6's own sign-in flows and ours, side by side against the same local stand-in of
each authorization server: the same requests (method, path, form or JSON fields, their
fixed values), the same authorize link, the same device code shown, and credentials of
the same shape for auth.json. pi 1.6 runs its pi-ai flow module under
``support/node/pi16_sign_in.mjs`` with ``provider_origins.mjs`` moving its fetches here."""

import asyncio
import json
import os
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from support.programs import node_for, require_real
from support.signin16_server import Signin16Server
from support.signin_server import SignInServer

from pi_plugins.signin import device_code
from pi_plugins.signin.flows import SIGN_INS, LoginCallbacks

NODE = Path(__file__).parents[1] / "support" / "node"
DEVICE_ID = "0f8e7d6c-5b4a-4321-8fed-cba987654321"
#: Values that differ on every run (random, or the server's counter).
VOLATILE = {"code", "code_verifier", "code_challenge", "state", "nonce", "device_code", "refresh_token",
            "callback_url", "redirect_uri_port"}

#: (our provider, pi-ai 1.6's flow module, the method picked, the stand-in, browser step)
FLOWS = [
    ("openai-codex", "openai-codex", "device_code", SignInServer, False),
    ("xai", "xai", "", Signin16Server, False),
    ("kimi-coding", "kimi-coding", "", Signin16Server, False),
    ("meta", "meta", "", Signin16Server, False),
    ("radius", "radius", "device-code", Signin16Server, False),
    ("radius", "radius", "browser", Signin16Server, True),
    ("openrouter", "openrouter", "", Signin16Server, True),
    ("openai", "openai-chatgpt", "", Signin16Server, True),
]


def requests_seen(server) -> list[tuple]:
    """What the flow sent, without the values that change on every run."""
    seen = []
    for r in server.requests:
        body = {k: ("*" if k in VOLATILE else v) for k, v in (r["body"] or {}).items()}
        query = {k: ("*" if k in VOLATILE else v[0]) for k, v in r["query"].items()}
        kind = (r["headers"].get("content-type") or "").split(";")[0]
        seen.append((r["method"], r["path"], kind, body, query))
    return seen


def run_pi(package: Path, flow: str, method: str, origins: str, argument: str = DEVICE_ID) -> tuple[dict, str]:
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "PI_PROVIDER_ORIGINS": origins}
    done = subprocess.run([node_for("pi16"), "--import", str(NODE / "provider_origins.mjs"),
                           str(NODE / "pi16_sign_in.mjs"), str(package), flow, method, argument],
                          env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def run_ours(provider: str, method: str, browser: bool) -> tuple[dict, list]:
    shown: list = []

    def on_auth(url, instructions):
        threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=10), daemon=True).start()

    async def select(message, options):
        return method

    async def never(*args):
        await asyncio.Event().wait()
        return ""

    callbacks = LoginCallbacks(on_auth=on_auth if browser else (lambda *a: None), prompt=never,
                               select=select, device_code=lambda url, code: shown.append((url, code)))
    options = {"device_id": DEVICE_ID} if provider == "openai" else {}
    return {"type": "oauth", **asyncio.run(SIGN_INS[provider].login(callbacks, **options))}, shown


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize(("provider", "flow", "method", "stand_in", "browser"), FLOWS,
                         ids=[f"{f[0]}-{f[2] or 'default'}" for f in FLOWS])
def test_pi16_and_ours_sign_in_alike(provider, flow, method, stand_in, browser, monkeypatch, callback_ports):
    package = require_real("pi16")
    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 1.0)  # pi's own floor, on both sides
    with stand_in() as server:
        theirs, said = run_pi(package, flow, method, server.origins())
        their_requests = requests_seen(server)
    with stand_in() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        ours, shown = run_ours(provider, method, browser)
        our_requests = requests_seen(server)
    assert their_requests and our_requests == their_requests
    assert any(method == "GET" for method, *_ in their_requests) == browser  # the browser's visit
    assert list(ours) == list(theirs)
    assert {k: v for k, v in ours.items() if k not in ("access", "refresh", "expires")} == \
        {k: v for k, v in theirs.items() if k not in ("access", "refresh", "expires")}
    assert abs(ours["expires"] - theirs["expires"]) < 120_000
    if shown:
        url, code = shown[0]
        assert f"device_code {url} {code}" in said


#: (our provider, pi-ai 1.6's flow module, the stand-in's token family, the stand-in)
REFRESHES = [("openai-codex", "openai-codex", "", SignInServer), ("openai", "openai-chatgpt", "chatgpt", Signin16Server),
             ("xai", "xai", "xai", Signin16Server), ("kimi-coding", "kimi-coding", "kimi", Signin16Server),
             ("meta", "meta", "meta", Signin16Server), ("radius", "radius", "radius", Signin16Server),
             ("openrouter", "openrouter", "", Signin16Server)]


def stored_credential(provider: str, family: str, server) -> dict:
    """A sign-in as auth.json keeps it, expired, with a refresh token the stand-in knows."""
    if provider == "meta":
        refresh = server.new("meta-identity")
    elif provider == "openrouter":
        refresh = ""
    else:
        refresh = server.issue_refresh_token(family) if family else server.issue_refresh_token()
    credential = {"type": "oauth", "access": "old-access", "refresh": refresh, "expires": 0}
    if provider == "openai":
        credential.update(clientId="client-issued-7", scopes=["chatgpt.tokens.use.direct"])
    if provider == "openai-codex":
        credential["accountId"] = "acct-123"
    return credential


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize(("provider", "flow", "family", "stand_in"), REFRESHES, ids=[r[0] for r in REFRESHES])
def test_pi16_and_ours_refresh_alike(provider, flow, family, stand_in, monkeypatch):
    package = require_real("pi16")
    with stand_in() as server:
        theirs, _ = run_pi(package, flow, "refresh", server.origins(),
                           json.dumps(stored_credential(provider, family, server)))
        their_requests = requests_seen(server)
    with stand_in() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        stored = stored_credential(provider, family, server)
        ours = {"type": "oauth", **asyncio.run(SIGN_INS[provider].refresh(stored))}
        our_requests = requests_seen(server)
    assert our_requests == their_requests
    assert list(ours) == list(theirs)
    assert {k: v for k, v in ours.items() if k not in ("access", "refresh", "expires")} == \
        {k: v for k, v in theirs.items() if k not in ("access", "refresh", "expires")}
    assert abs(ours["expires"] - theirs["expires"]) < 120_000
    assert ours["access"] != "old-access" or provider == "openrouter"


def test_the_side_by_side_covers_every_new_sign_in():
    covered = {provider for provider, *_ in FLOWS}
    assert covered == {"openai-codex", "openai", "xai", "openrouter", "kimi-coding", "meta", "radius"}
    # anthropic's and github-copilot's are 0.73.1's, tried beside pi 0.73.1 (test_with_real_pi)
    assert covered | {"anthropic", "github-copilot"} == set(SIGN_INS)
