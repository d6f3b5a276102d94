"""Amazon Bedrock's specifics: SigV4 from the AWS credentials (botocore), a Bedrock API
key as Bearer instead, AWS's binary event-stream frames (CRC-checked), and errors that
name what to set or install."""

import sys

import pytest
from support.llm_server import Reply, event_frame
from support.provider_streams import collect, run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers import bedrock
from pi_plugins.providers.catalogue import builtin_models

CONTEXT = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])])


def test_a_request_is_signed_with_sigv4_for_bedrock_in_the_region(llm_server, monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    llm_server.push(Reply(text="Signed."))
    message = run(collect(llm_server.model("bedrock-converse-stream", id="anthropic.claude-x:0"), CONTEXT,
                          StreamOptions(max_retries=0)))[1]
    assert message.text == "Signed.", message.error_message
    [request] = llm_server.requests
    auth = request.headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDPIHARNESSTEST/")
    assert "/eu-west-1/bedrock/aws4_request" in auth and "Signature=" in auth
    assert "x-amz-date" in request.headers
    assert request.path == "/model/anthropic.claude-x%3A0/converse-stream"
    assert request.body["system"] == [{"text": "Be brief."}]


def test_a_bedrock_api_key_goes_as_bearer_without_a_signature(llm_server, monkeypatch):
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-key")
    llm_server.push(Reply(text="ok"))
    run(collect(llm_server.model("bedrock-converse-stream"), CONTEXT, StreamOptions(max_retries=0)))
    assert llm_server.requests[0].headers["authorization"] == "Bearer bedrock-key"


def test_the_region_picks_the_endpoint():
    model = next(m for m in builtin_models() if m.provider == "amazon-bedrock")
    assert bedrock.endpoint(model).startswith("https://bedrock-runtime.us-east-1.amazonaws.com/model/")


def test_a_corrupt_frame_ends_the_stream_with_an_error(llm_server):
    good = event_frame({":event-type": "messageStart", ":message-type": "event"}, b'{"role":"assistant"}')
    bad = bytearray(event_frame({":event-type": "contentBlockDelta", ":message-type": "event"},
                                b'{"contentBlockIndex":0,"delta":{"text":"x"}}'))
    bad[-1] ^= 0xFF  # the message CRC no longer matches
    llm_server.push(Reply(raw=(good + bytes(bad)).decode("latin-1"), content_type="application/vnd.amazon.eventstream"))
    message = run(collect(llm_server.model("bedrock-converse-stream"), CONTEXT, StreamOptions(api_key="k", max_retries=0)))[1]
    assert message.stop_reason == "error" and "event-stream frame" in message.error_message


def test_a_throttling_exception_in_the_stream_is_retryable(llm_server):
    llm_server.push(Reply(text="Par", error="Too many requests", error_type="throttlingException"))
    message = run(collect(llm_server.model("bedrock-converse-stream"), CONTEXT, StreamOptions(api_key="k", max_retries=0)))[1]
    assert message.text == "Par" and "throttlingException" in message.error_message
    assert message.failure.kind == "retryable"


def test_without_credentials_the_error_says_what_to_set(llm_server, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    message = run(collect(llm_server.model("bedrock-converse-stream"), CONTEXT, StreamOptions(max_retries=0)))[1]
    assert message.stop_reason == "error" and "AWS_BEARER_TOKEN_BEDROCK" in message.error_message
    assert llm_server.requests == []


def test_without_botocore_the_error_names_the_extra(llm_server, monkeypatch):
    monkeypatch.setitem(sys.modules, "botocore.auth", None)
    message = run(collect(llm_server.model("bedrock-converse-stream"), CONTEXT, StreamOptions(max_retries=0)))[1]
    assert "pi-harness[bedrock]" in message.error_message


def test_claude_gets_cache_points_and_its_thinking_fields_as_pi_sends_them(llm_server):
    llm_server.push(Reply(text="ok"))
    model = llm_server.model("bedrock-converse-stream", id="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                             reasoning=True, max_tokens=64000)
    run(collect(model, CONTEXT, StreamOptions(api_key="k", max_retries=0, thinking_level="medium")))
    body = llm_server.requests[0].body
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert body["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default"}}
    fields = body["additionalModelRequestFields"]
    assert fields["thinking"]["type"] == "enabled" and fields["thinking"]["display"] == "summarized"
    assert fields["anthropic_beta"] == ["interleaved-thinking-2025-05-14"]


def test_the_clouds_own_credentials_make_bedrock_and_vertex_usable_without_a_key(tmp_path):
    from pi_plugins.models.registry import ModelRegistry

    def available(env):
        registry = ModelRegistry(builtin_models(), agent_dir="/nonexistent", env=env, models_json=False)
        return {m.provider for m in registry.available()} & {"amazon-bedrock", "google-vertex"}

    assert available({}) == set()
    assert available({"AWS_PROFILE": "work"}) == {"amazon-bedrock"}
    assert available({"AWS_ACCESS_KEY_ID": "a"}) == set()  # half a pair is no credentials
    (tmp_path / "adc.json").write_text("{}")  # Google's credentials count when the file exists
    assert available({"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "adc.json"), "GOOGLE_CLOUD_PROJECT": "p",
                      "GOOGLE_CLOUD_LOCATION": "us-central1"}) == {"google-vertex"}
    assert available({"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "none.json"), "GOOGLE_CLOUD_PROJECT": "p",
                      "GOOGLE_CLOUD_LOCATION": "us-central1"}) == set()


@pytest.mark.process
def test_pi_p_signs_a_bedrock_request_with_the_aws_keys_alone(tmp_path, llm_server):
    import json
    import os
    import subprocess

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {"amazon-bedrock": {"baseUrl": llm_server.url}}}))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(agent),
           "AWS_ACCESS_KEY_ID": "AKIDPROCESS", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-west-2",
           "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}
    llm_server.push(Reply(text="From Bedrock."))
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--model",
                           "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "--no-session", "-p", "Hi"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "From Bedrock."
    assert "Credential=AKIDPROCESS/" in llm_server.requests[0].headers["authorization"]
    assert "/us-west-2/bedrock/" in llm_server.requests[0].headers["authorization"]


@pytest.mark.process
@pytest.mark.requires("pi")
def test_the_bedrock_request_matches_the_real_pis(tmp_path, llm_server):
    """pi's AWS SDK speaks HTTP/2 to Bedrock unless AWS_BEDROCK_FORCE_HTTP1=1 (pi's own
    switch for endpoints without it), which the scripted HTTP/1.1 server needs. The
    SDK's bookkeeping headers (amz-sdk-invocation-id, amz-sdk-request, x-amz-user-agent,
    x-amz-content-sha256) are its own; botocore signs without them, and both are SigV4."""
    import json
    import re

    from support.side_by_side import requests_of_both

    def prepare(agent):
        (agent / "models.json").write_text(json.dumps({"providers": {"amazon-bedrock": {"baseUrl": llm_server.url}}}))
    pi, ours = requests_of_both(
        tmp_path, llm_server, "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", args=("--thinking", "high"),
        prepare=prepare, answer="From Bedrock.",
        env={"AWS_ACCESS_KEY_ID": "AKIDBOTH", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "us-west-2",
             "AWS_BEDROCK_FORCE_HTTP1": "1", "AWS_EC2_METADATA_DISABLED": "true",
             "AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"})
    assert ours.path == pi.path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    scope = re.compile(r"^AWS4-HMAC-SHA256 Credential=AKIDBOTH/\d{8}/us-west-2/bedrock/aws4_request, SignedHeaders=")
    assert scope.match(pi.headers["authorization"]) and scope.match(ours.headers["authorization"])
    assert ours.headers["content-type"] == pi.headers["content-type"] == "application/json"
    assert "x-amz-date" in ours.headers and "x-amz-date" in pi.headers
    skip = ("system", "toolConfig", "inferenceConfig")  # the system prompts and tool texts are each program's own
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}
    # pi 0.73.1 asked for its 32000 cap plus the thinking budget; pi 1.6 the model's whole limit
    assert pi.body["inferenceConfig"] == {"maxTokens": 32000 + 16384}
    assert ours.body["inferenceConfig"] == {"maxTokens": 64000}
    assert list(ours.body) == list(pi.body)
    assert sorted(t["toolSpec"]["name"] for t in ours.body["toolConfig"]["tools"]) == \
        sorted(t["toolSpec"]["name"] for t in pi.body["toolConfig"]["tools"])


def test_each_event_stream_frame_is_reported_to_provider_stream_event_as_the_aws_sdk_yields_it(llm_server):
    """pi 1.6 hands the SDK's items to ``provider_stream_event``: ``{"<event type>": payload}``."""
    llm_server.push(Reply(text="Framed."))
    heard = []

    async def hear(data):
        heard.append(data)

    message = run(collect(llm_server.model("bedrock-converse-stream"), CONTEXT,
                          StreamOptions(api_key="k", max_retries=0, on_stream_event=hear)))[1]
    assert message.text == "Framed.", message.error_message
    assert heard[0] == {"messageStart": {"role": "assistant"}}
    assert all(len(item) == 1 for item in heard)
    assert [next(iter(item)) for item in heard][-2:] == ["messageStop", "metadata"]
    assert "".join(item["contentBlockDelta"]["delta"].get("text", "") for item in heard
                   if "contentBlockDelta" in item) == "Framed."
