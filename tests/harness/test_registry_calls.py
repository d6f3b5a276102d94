"""pi 1.6's ``ctx.modelRegistry.streamSimple()`` and ``complete()``, spelled
``ctx.model_registry.stream_simple()`` and ``complete()``: a plugin's tool asks a model of
the registry during a real ``pi -p`` run against the scripted server, the key resolved as
for the session's own requests."""

import json

import pytest
from support.cli import PiRunner
from support.llm_server import Reply

EXTENSION = '''
import attrs

from pi_core import hookimpl, tool
from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions


@tool(parameters={"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]})
async def ask_registry(args, run):
    """Ask the model again, through the registry."""
    registry = run.ctx.model_registry
    model = registry.find("local", "test-model")
    context = LlmContext(system_prompt="Answer in a word.",
                         messages=[UserMessage(content=[TextContent(args["question"])])])
    kinds = [event.type async for event in registry.stream_simple(model, context)]
    answer = await registry.complete(model, context, StreamOptions(max_tokens=50))
    broken = await registry.complete(attrs.evolve(model, api="no-such-api"), context)  # no provider
    return f"{kinds[0]}..{kinds[-1]} / {answer.text} / {broken.stop_reason}: {broken.error_message}"


@hookimpl
def register_tools():
    return [ask_registry]
'''


@pytest.mark.process
def test_a_plugin_streams_and_completes_from_the_model_registry(tmp_path, server):
    runner = PiRunner(tmp_path, server)
    models = server.models_json("local", "openai-completions", apiKey="LOCAL_KEY", authHeader=True)
    (runner.agent_dir / "models.json").write_text(json.dumps(models))
    runner.env["LOCAL_KEY"] = "sk-local"
    (runner.cwd / "ask.py").write_text(EXTENSION)
    server.push(Reply(tool_calls=[("ask_registry", {"question": "2+2?"})]), Reply(text="four"),
                Reply(text="4"), Reply(text="done"))
    done = runner.run("-e", "ask.py", "--no-session", "-p", "ask")
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    session, streamed, completed, last = server.requests
    assert streamed.body["messages"] == completed.body["messages"] == [
        {"role": "system", "content": "Answer in a word."}, {"role": "user", "content": [{"type": "text", "text": "2+2?"}]}]
    assert streamed.headers["authorization"] == completed.headers["authorization"] \
        == session.headers["authorization"] == "Bearer sk-local"  # the key resolved as for the session
    assert (completed.body["max_completion_tokens"], streamed.body["max_completion_tokens"]) == (50, 16384)
    [result] = [m for m in last.body["messages"] if m["role"] == "tool"]
    assert result["content"] == "start..done / 4 / error: no provider for api 'no-such-api' (model local/test-model)"
