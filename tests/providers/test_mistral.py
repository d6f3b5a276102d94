"""Mistral's own API: its deltas may carry a list of parts, thinking and text."""

import json

import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions


def sse(*chunks) -> str:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def test_thinking_and_text_parts_become_thinking_and_text(llm_server):
    chunk = lambda content, finish=None: {"id": "m-1", "choices": [{"index": 0, "delta": {"content": content},
                                                                    "finish_reason": finish}]}
    llm_server.push(Reply(raw=sse(
        chunk([{"type": "thinking", "thinking": [{"type": "text", "text": "Let me "}]}]),
        chunk([{"type": "thinking", "thinking": [{"type": "text", "text": "think."}]}]),
        chunk([{"type": "text", "text": "Answer"}]),
        chunk(" done.", "stop"),
        {"id": "m-1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
    ), content_type="text/event-stream"))
    model = llm_server.model("mistral-conversations", provider="mistral", reasoning=True)
    message = run(collect(model, LlmContext(messages=[UserMessage(content=[TextContent("Hi")])]),
                          StreamOptions(api_key="k", max_retries=0, session_id="s-1")))[1]
    assert message.stop_reason == "stop", message.error_message
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "Let me think." and message.text == "Answer done."
    [request] = llm_server.requests
    assert request.path == "/v1/chat/completions" and request.headers["x-affinity"] == "s-1"
    assert "store" not in request.body and "max_completion_tokens" not in request.body


@pytest.mark.process
@pytest.mark.requires("pi")
def test_the_mistral_request_matches_the_real_pis(tmp_path, llm_server):
    from support.side_by_side import requests_of_both

    pi, ours = requests_of_both(tmp_path, llm_server, "mistral/mistral-large-latest",
                                env={"MISTRAL_API_KEY": "mistral-key"},
                                origins={"https://api.mistral.ai": llm_server.url})
    assert ours.path == pi.path == "/v1/chat/completions"
    assert ours.headers["authorization"] == pi.headers["authorization"] == "Bearer mistral-key"
    # pi 0.73.1 capped the output at 32000 tokens; we ask for pi 1.6's whole limit
    assert ours.body["max_tokens"] == 262144 and pi.body["max_tokens"] == 32000
    skip = ("messages", "tools", "max_tokens")
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}
    assert [m["role"] for m in ours.body["messages"]] == [m["role"] for m in pi.body["messages"]]
