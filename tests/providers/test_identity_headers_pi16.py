"""The client identity pi-ai 1.6 puts on every request, side by side on the scripted server:
a detailed ``User-Agent`` (``pi/<version> (<os>; node/<version>; <arch>)``; ours
``pi-harness/<version> (<os>; python/<version>; <arch>)``) and, for OpenRouter, NVIDIA and
OpenCode, their attribution headers (with our name; pi 1.6's ``HTTP-Referer`` is its web
page, which pi-harness has none of). ``PI_TELEMETRY=0`` turns the attribution off in both;
a ``before_provider_headers`` handler does not see them."""

import json
import re
import subprocess

import pytest
from support.llm_server import ANTHROPIC, COMPLETIONS, GOOGLE, MISTRAL, RESPONSES, Reply

ATTRIBUTION = {"http-referer", "x-openrouter-title", "x-openrouter-categories", "x-billing-invoke-origin",
               "x-opencode-client"}
#: (os, runtime, arch) of a detailed User-Agent
DETAILED = r"^{name}/\d+\.\d+\.\d+ \((linux|darwin|win32); {runtime}/v?\d+\.\d+\.\d+; (x64|arm64|ia32)\)$"


def _headers(who: str, runner, server, provider: str, env: dict | None = None) -> dict:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else runner.command()[:3])
    server.push(Reply(text="ok"))
    done = subprocess.run([*command, "--model", f"{provider}/test-model", "--no-session", "-p", "hi"], cwd=runner.cwd,
                          env={**runner.env, "PI_OFFLINE": "1", **(env or {})}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return {k.lower(): v for k, v in server.requests[-1].headers.items()}


def _identity(headers: dict) -> dict:
    return {k: v for k, v in headers.items() if k in ATTRIBUTION}


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("provider,api", [
    ("local", COMPLETIONS), ("local", RESPONSES), ("local", ANTHROPIC), ("local", GOOGLE), ("local", MISTRAL),
    ("openrouter", COMPLETIONS), ("nvidia", COMPLETIONS), ("opencode", COMPLETIONS),
])
def test_each_request_names_the_client_in_pi16s_headers(pi, server, provider, api):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json(provider, api, apiKey="test-key")))
    theirs = _headers("pi16", pi, server, provider)
    ours = _headers("ours", pi, server, provider)
    assert re.match(DETAILED.format(name="pi", runtime="node"), theirs["user-agent"]), theirs["user-agent"]
    assert re.match(DETAILED.format(name="pi-harness", runtime="python"), ours["user-agent"]), ours["user-agent"]
    expected = {k: v.replace("Pi", "Pi-harness").replace("pi", "pi-harness") for k, v in _identity(theirs).items()
                if k != "http-referer"}
    assert _identity(ours) == expected
    if provider != "local":
        assert expected, theirs  # the attribution pi 1.6 sends this provider is there to compare
    quiet = {"PI_TELEMETRY": "0"}
    assert _identity(_headers("pi16", pi, server, provider, quiet)) == _identity(_headers("ours", pi, server, provider, quiet)) == {}


def test_a_header_handler_does_not_see_the_identity_but_can_replace_or_drop_it(llm_server):
    import asyncio

    from support.provider_streams import collect

    from pi_core.protocol.model import Model
    from pi_core.protocol.provider import LlmContext, StreamOptions

    model = Model(id="m", provider="openrouter", api=COMPLETIONS, base_url=llm_server.base_url(COMPLETIONS))
    seen = []

    async def handler(headers: dict) -> dict:
        seen.append({k.lower() for k in headers})
        return {**headers, "User-Agent": "mine/1", "X-OpenRouter-Title": None}

    llm_server.push(Reply(text="ok"))
    asyncio.run(collect(model, LlmContext(messages=[]), StreamOptions(api_key="k", on_headers=handler)))
    sent = {k.lower(): v for k, v in llm_server.requests[-1].headers.items()}
    assert not seen[0] & (ATTRIBUTION | {"user-agent"})
    assert sent["user-agent"] == "mine/1" and "x-openrouter-title" not in sent
    assert sent["x-openrouter-categories"] == "cli-agent"
