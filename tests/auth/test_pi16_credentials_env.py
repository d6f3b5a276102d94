"""Credentials as pi 1.6 reads them: Anthropic's ``ANTHROPIC_AUTH_TOKEN`` (a bearer
token, no key) and ``ANTHROPIC_OAUTH_TOKEN`` (a key, before ``ANTHROPIC_API_KEY``), a
stored key winning over both; and an auth.json key's ``env``, whose variables take
priority over the process environment for that provider. Each run side by side with the
real pi 1.6 where it can run here, against the same scripted server."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process

SHIM = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
AUTH_HEADERS = ("x-api-key", "authorization", "anthropic-beta", "x-app")


def _run_both(tmp_path, server, model, env, auth=None, models=None, origins=None, with_pi16=True):
    """{who: the one request it sent} for ``pi --model MODEL -p hi``, each in its own home."""
    from support.programs import node_for, require_real

    seen = {}
    for who in ("pi16", "ours") if with_pi16 else ("ours",):
        agent = tmp_path / who / "agent"
        agent.mkdir(parents=True)
        if models is not None:
            (agent / "models.json").write_text(json.dumps(models))
        if auth is not None:
            (agent / "auth.json").write_text(json.dumps(auth))
        run_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who), "PI_OFFLINE": "1",
                   "PI_CODING_AGENT_DIR": str(agent), **env}
        if origins:
            run_env["PI_PROVIDER_ORIGINS"] = json.dumps(origins)
        command = ([node_for("pi16"), "--import", str(SHIM), str(require_real("pi16") / "dist" / "cli.js")]
                   if who == "pi16" else [sys.executable, "-m", "pi_plugins.cli"])
        server.push(Reply(text="ok"))
        done = subprocess.run([*command, "--model", model, "--no-session", "-p", "hi"], cwd=tmp_path / who,
                              env=run_env, capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout) == (0, "ok\n"), f"{who}: {done.stderr}"
        seen[who] = server.requests[-1]
    return seen


def _auth_headers(request):
    return {k: v for k, v in request.headers.items() if k.lower() in AUTH_HEADERS}


@pytest.mark.requires("pi16")
@pytest.mark.parametrize("env,auth,expected", [
    ({"ANTHROPIC_AUTH_TOKEN": "tok-auth", "ANTHROPIC_OAUTH_TOKEN": "tok-oauth", "ANTHROPIC_API_KEY": "key"},
     None, {"authorization": "Bearer tok-auth"}),
    ({"ANTHROPIC_OAUTH_TOKEN": "tok-oauth", "ANTHROPIC_API_KEY": "key"}, None, {"x-api-key": "tok-oauth"}),
    ({"ANTHROPIC_AUTH_TOKEN": "tok-auth"}, {"anthropic": {"type": "api_key", "key": "stored"}},
     {"x-api-key": "stored"}),
], ids=["auth-token-wins-as-bearer", "oauth-token-before-api-key", "stored-key-wins"])
def test_anthropic_tokens_from_the_environment_are_sent_as_pi16_sends_them(tmp_path, server, env, auth, expected):
    models = {"providers": {"anthropic": {"baseUrl": server.base_url("anthropic-messages")}}}
    seen = _run_both(tmp_path, server, "anthropic/claude-sonnet-4-5", env, auth=auth, models=models)
    theirs, ours = _auth_headers(seen["pi16"]), _auth_headers(seen["ours"])
    assert ours == theirs
    assert {k: v for k, v in ours.items() if k != "anthropic-beta"} == expected


def test_an_environment_bearer_token_is_redacted_like_a_key(tmp_path):
    from pi_plugins.models.registry import ModelRegistry
    from pi_plugins.providers.catalogue import builtin_models

    registry = ModelRegistry(builtin_models(), agent_dir=tmp_path, env={"ANTHROPIC_AUTH_TOKEN": "tok-secret"},
                             models_json=False)
    model = next(m for m in registry.models if m.provider == "anthropic")
    assert registry.key_source(model) == "environment (ANTHROPIC_AUTH_TOKEN)"
    assert registry.api_key(model) is None  # no x-api-key: the token is the Authorization header
    assert registry.request_headers(model) == {"Authorization": "Bearer tok-secret"}
    assert ("tok-secret", "ANTHROPIC_AUTH_TOKEN") in registry.held_keys()


@pytest.mark.requires("pi16")
def test_a_stored_keys_env_fills_the_providers_url_over_the_process_environment(tmp_path, server):
    auth = {"cloudflare-workers-ai": {"type": "api_key", "key": "cf-key",
                                      "env": {"CLOUDFLARE_ACCOUNT_ID": "from-auth-json"}}}
    base = server.url + "/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1"  # the catalogue's, on the server
    models = {"providers": {"cloudflare-workers-ai": {"baseUrl": base}}}
    seen = _run_both(tmp_path, server, "cloudflare-workers-ai/@cf/google/gemma-4-26b-a4b-it",
                     {"CLOUDFLARE_ACCOUNT_ID": "from-process"}, auth=auth, models=models)
    assert seen["ours"].path == seen["pi16"].path == "/client/v4/accounts/from-auth-json/ai/v1/chat/completions"
    assert seen["ours"].headers["authorization"] == seen["pi16"].headers["authorization"] == "Bearer cf-key"
