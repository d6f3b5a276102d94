"""Anthropic workload identity federation (pi 1.6, from the Anthropic SDK): with no key,
``ANTHROPIC_FEDERATION_RULE_ID``, ``ANTHROPIC_ORGANIZATION_ID`` and
``ANTHROPIC_IDENTITY_TOKEN_FILE`` trade the identity token for an access token at the
provider's ``/v1/oauth/token``, then sent as a bearer token. Side by side with the real
pi 1.6, the scripted server standing in for both endpoints."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from support.llm_server import Reply

SHIM = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
TOKEN = {"access_token": "minted-token", "token_type": "Bearer", "expires_in": 3600}
FEDERATION = {"ANTHROPIC_FEDERATION_RULE_ID": "fdrl_rule", "ANTHROPIC_ORGANIZATION_ID": "org-1",
              "ANTHROPIC_SERVICE_ACCOUNT_ID": "svac_1", "ANTHROPIC_WORKSPACE_ID": "wrkspc_1"}
SENT_HEADERS = ("authorization", "x-api-key", "anthropic-beta", "content-type")


def _run(who, home, server, env, prompts=1):
    """The requests ``pi -p`` made (``who``: pi16 or ours), each prompt its own run."""
    from support.programs import node_for, require_real

    agent = home / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps(
        {"providers": {"anthropic": {"baseUrl": server.base_url("anthropic-messages")}}}))
    run_env = {"PATH": os.environ["PATH"], "HOME": str(home), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent), **env}
    command = ([node_for("pi16"), "--import", str(SHIM), str(require_real("pi16") / "dist" / "cli.js")]
               if who == "pi16" else [sys.executable, "-m", "pi_plugins.cli"])
    before = len(server.requests)
    server.push(Reply(text="ok"))
    done = subprocess.run([*command, "--model", "anthropic/claude-sonnet-4-5", "--no-session", "-p", "hi"],
                          cwd=home, env=run_env, capture_output=True, text=True, timeout=120)
    return done, server.requests[before:]


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_federation_exchanges_the_identity_token_and_sends_the_minted_one_as_pi16(tmp_path, server):
    server.json_routes["/v1/oauth/token"] = TOKEN
    identity = tmp_path / "identity.jwt"
    identity.write_text("header.payload.signature\n")
    env = {**FEDERATION, "ANTHROPIC_IDENTITY_TOKEN_FILE": str(identity)}
    seen = {}
    for who in ("pi16", "ours"):
        done, requests = _run(who, tmp_path / who, server, env)
        assert (done.returncode, done.stdout) == (0, "ok\n"), f"{who}: {done.stderr}"
        seen[who] = requests
    theirs, ours = seen["pi16"], seen["ours"]
    assert [r.path for r in ours] == [r.path for r in theirs] == ["/v1/oauth/token", "/v1/messages"]
    assert ours[0].body == theirs[0].body == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "header.payload.signature",
        "federation_rule_id": "fdrl_rule", "organization_id": "org-1", "service_account_id": "svac_1",
        "workspace_id": "wrkspc_1"}
    assert list(ours[0].body) == list(theirs[0].body)  # the fields in the SDK's order

    def picked(request):
        return {k: v for k, v in request.headers.items() if k in SENT_HEADERS}
    assert picked(ours[0]) == picked(theirs[0])
    assert picked(ours[0])["anthropic-beta"] == "oauth-2025-04-20,oidc-federation-2026-04-01"
    assert picked(ours[1]) == picked(theirs[1])
    assert picked(ours[1])["authorization"] == "Bearer minted-token"
    assert "oauth-2025-04-20" in picked(ours[1])["anthropic-beta"].split(",")


@pytest.mark.process
def test_a_key_wins_over_federation_and_a_missing_variable_turns_it_off(tmp_path, server):
    server.json_routes["/v1/oauth/token"] = TOKEN
    identity = tmp_path / "identity.jwt"
    identity.write_text("jwt")
    env = {**FEDERATION, "ANTHROPIC_IDENTITY_TOKEN_FILE": str(identity)}
    done, requests = _run("ours", tmp_path / "keyed", server, {**env, "ANTHROPIC_API_KEY": "sk-key"})
    assert done.returncode == 0, done.stderr
    assert [r.path for r in requests] == ["/v1/messages"]
    assert requests[0].headers["x-api-key"] == "sk-key" and "authorization" not in requests[0].headers
    del env["ANTHROPIC_ORGANIZATION_ID"]
    done, requests = _run("ours", tmp_path / "partial", server, env)
    assert [r.path for r in requests] == ["/v1/messages"]  # no exchange
    assert "authorization" not in requests[0].headers


def test_a_token_is_reused_until_near_its_expiry_and_a_failed_exchange_is_said(tmp_path, server):
    asyncio.run(_reuse_and_failure(tmp_path, server))


async def _reuse_and_failure(tmp_path, server):
    from pi_core.protocol.provider import StreamOptions
    from pi_plugins.providers.anthropic_federation import FederationError, Tokens
    from pi_plugins.providers.catalogue import builtin_models

    model = next(m for m in builtin_models() if m.provider == "anthropic")
    model = attrs.evolve(model, base_url=server.url)
    identity = tmp_path / "identity.jwt"
    identity.write_text("jwt")
    options = StreamOptions(env={**FEDERATION, "ANTHROPIC_IDENTITY_TOKEN_FILE": str(identity)})
    tokens = Tokens()
    server.json_routes["/v1/oauth/token"] = {**TOKEN, "expires_in": 3600}
    await tokens.ensure(model, options)
    await tokens.ensure(model, options)
    assert len(server.requests) == 1  # held for the hour
    headers = {"anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}
    tokens.headers(model, options, headers)
    assert headers == {"anthropic-beta": "fine-grained-tool-streaming-2025-05-14,oauth-2025-04-20",
                       "authorization": "Bearer minted-token"}
    server.json_routes["/v1/oauth/token"] = {**TOKEN, "expires_in": 60}
    fresh = Tokens()
    await fresh.ensure(model, options)
    await fresh.ensure(model, options)
    assert len(server.requests) == 3  # under two minutes left: exchanged again
    identity.write_text("")
    with pytest.raises(FederationError, match=f"Identity token file at {identity} is empty"):
        await Tokens().ensure(model, options)
    keyed = StreamOptions(api_key="sk-key", env=options.env)
    await Tokens().ensure(model, keyed)
    assert len(server.requests) == 3  # a key: no exchange
