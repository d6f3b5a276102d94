"""Vertex AI: Gemini through Google Cloud, with an API key or application-default
credentials (google-auth, the extra ``vertex``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.provider_streams import run
from support.signin_server import SignInServer

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers import google_vertex
from pi_plugins.providers.catalogue import builtin_models
from pi_plugins.providers.google_vertex import GoogleVertexProvider

CONTEXT = LlmContext(messages=[UserMessage(content=[TextContent("Hi")])])


def private_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def vertex():
    return next(m for m in builtin_models() if m.key == "google-vertex/gemini-2.5-flash")


async def answer(model, options):
    events = [e async for e in GoogleVertexProvider().stream(model, CONTEXT, options)]
    return events[-1].message if events[-1].type == "done" else events[-1].error


def test_application_default_credentials_give_a_bearer_token_to_the_projects_location(llm_server, tmp_path, monkeypatch):
    with SignInServer() as google:
        adc = tmp_path / "adc.json"  # a service account whose token endpoint is the local server
        adc.write_text(json.dumps({"type": "service_account", "project_id": "proj-1", "private_key_id": "k1",
                                   "private_key": private_key(), "client_email": "pi@proj-1.iam.gserviceaccount.com",
                                   "client_id": "1", "token_uri": f"{google.url}/google/token"}))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
        monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
        monkeypatch.delenv("GOOGLE_CLOUD_API_KEY", raising=False)
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://us-central1-aiplatform.googleapis.com": llm_server.url}))
        monkeypatch.setattr(google_vertex, "_credentials", [])
        llm_server.push(Reply(text="From Vertex."), Reply(text="Again."))
        first = run(answer(vertex(), StreamOptions(max_retries=0)))
        second = run(answer(vertex(), StreamOptions(max_retries=0)))
        assert (first.text, second.text) == ("From Vertex.", "Again."), first.error_message
        assert google.refreshes == 1  # the token is kept until it nears its expiry
    request = llm_server.requests[0]
    assert request.path == ("/v1/projects/proj-1/locations/us-central1/publishers/google/models/"
                            "gemini-2.5-flash:streamGenerateContent")
    assert request.headers["authorization"].startswith("Bearer ya29.google") and "x-goog-api-key" not in request.headers


def _gcloud_signed_in(home: Path) -> Path:
    """What ``gcloud auth application-default login`` leaves: a user's refresh token."""
    adc = home / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text(json.dumps({"type": "authorized_user", "client_id": "c-1.apps.googleusercontent.com",
                               "client_secret": "s-1", "refresh_token": "1//refresh"}))
    return adc


def test_gclouds_credentials_file_makes_vertex_usable_with_a_project_and_location_as_pi_counts_it(tmp_path):
    from pi_plugins.models.registry import ModelRegistry

    def usable(env):
        registry = ModelRegistry(builtin_models(), agent_dir=tmp_path / "agent", env=env, models_json=False)
        return any(m.provider == "google-vertex" for m in registry.available())

    home, elsewhere = tmp_path / "home", tmp_path / "key.json"
    place = {"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}
    assert not usable({"HOME": str(home), **place})  # no credentials anywhere
    _gcloud_signed_in(home)
    assert usable({"HOME": str(home), **place})
    assert usable({"HOME": str(home), "GCLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"})
    assert not usable({"HOME": str(home), "GOOGLE_CLOUD_PROJECT": "p"})  # no location
    assert not usable({"HOME": str(home), "GOOGLE_CLOUD_LOCATION": "us-central1"})  # no project
    # the variable names the file, and only that one counts (pi does not look further)
    assert not usable({"HOME": str(home), "GOOGLE_APPLICATION_CREDENTIALS": str(elsewhere), **place})
    elsewhere.write_text("{}")
    assert usable({"HOME": str(tmp_path / "nobody"), "GOOGLE_APPLICATION_CREDENTIALS": str(elsewhere), **place})


def test_a_request_with_gclouds_credentials_file_gets_the_users_token(llm_server, tmp_path, monkeypatch):
    with SignInServer() as google:
        _gcloud_signed_in(tmp_path / "home")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_API_KEY", "CLOUDSDK_CONFIG"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-1")
        monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "global")
        # a gcloud sign-in refreshes at Google's token endpoint, wherever its file says
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://aiplatform.googleapis.com": llm_server.url,
                                                              "https://oauth2.googleapis.com": google.url}))
        monkeypatch.setattr(google_vertex, "_credentials", [])
        llm_server.push(Reply(text="From Vertex."))
        message = run(answer(vertex(), StreamOptions(max_retries=0)))
        assert message.text == "From Vertex.", message.error_message
        assert google.refreshes == 1
    request = llm_server.requests[0]
    assert request.path == "/v1/projects/proj-1/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    assert request.headers["authorization"].startswith("Bearer ya29.google")


def test_without_a_project_the_error_says_which_variable_to_set(monkeypatch):
    for name in ("GOOGLE_CLOUD_API_KEY", "GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    message = run(answer(vertex(), StreamOptions(max_retries=0)))
    assert message.stop_reason == "error" and "GOOGLE_CLOUD_PROJECT" in message.error_message


def test_without_google_auth_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.auth", None)
    monkeypatch.setattr(google_vertex, "_credentials", [])
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "global")
    monkeypatch.delenv("GOOGLE_CLOUD_API_KEY", raising=False)
    message = run(answer(vertex(), StreamOptions(max_retries=0)))
    assert "pi-harness[vertex]" in message.error_message


@pytest.mark.process
@pytest.mark.requires("pi")
def test_the_vertex_api_key_request_matches_the_real_pis(tmp_path, llm_server):
    from support.side_by_side import requests_of_both

    pi, ours = requests_of_both(tmp_path, llm_server, "google-vertex/gemini-2.5-flash",
                                env={"GOOGLE_CLOUD_API_KEY": "vertex-key"},
                                origins={"https://aiplatform.googleapis.com": llm_server.url})
    assert (ours.path, ours.query) == (pi.path, pi.query)
    assert ours.headers["x-goog-api-key"] == pi.headers["x-goog-api-key"] == "vertex-key"
    skip = ("contents", "systemInstruction", "tools", "generationConfig")
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}
    # pi 0.73.1 capped the output at 32000 tokens; we ask for pi 1.6's whole limit
    config = {**pi.body["generationConfig"], "maxOutputTokens": 65536}
    assert ours.body["generationConfig"] == config


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_with_gclouds_credentials_file_both_programs_list_the_vertex_models(tmp_path):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    _gcloud_signed_in(tmp_path / "home")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PI_OFFLINE": "1",
           "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "GOOGLE_CLOUD_PROJECT": "p",
           "GOOGLE_CLOUD_LOCATION": "us-central1"}
    listed = {}
    for who, command in (("pi", [node_for("pi16"), str(Path(package) / "dist" / "cli.js")]),
                         ("ours", [sys.executable, "-m", "pi_plugins.cli"])):
        with open(tmp_path / f"{who}.txt", "w") as out:  # pi 1.6 writes it to stdout
            done = subprocess.run([*command, "--list-models", "google-vertex"], env=env, cwd=tmp_path,
                                  stdout=out, stderr=out, timeout=60)
        assert done.returncode == 0
        listed[who] = (tmp_path / f"{who}.txt").read_text().splitlines()
    assert listed["ours"] == listed["pi"]
    assert len(listed["pi"]) > 10 and all(line.startswith("google-vertex ") for line in listed["pi"][1:])
