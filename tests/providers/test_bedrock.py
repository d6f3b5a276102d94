"""Amazon Bedrock's specifics: SigV4 from the AWS credentials (botocore), a Bedrock API
key as Bearer instead, AWS's binary event-stream frames (CRC-checked), and errors that
name what to set or install."""

import sys

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
