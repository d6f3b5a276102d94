"""Zero-config local models: stub servers speaking each of Ollama's, llama.cpp's, LM
Studio's and vLLM's discovery endpoints and chat completions are found with no
models.json and no key, answer ``pi -p``, and are never probed offline or when a model
is configured. The probe keeps to its time budget whatever the ports do."""

import asyncio
import json
import subprocess
import sys
import time

import pytest
from support.llm_server import Reply
from support.local_servers import KINDS, Home, LocalServer, SilentPort, free_port
from support.rpc import RpcClient

from pi_core import Plugins
from pi_plugins.models.registry import ModelRegistry
from pi_core.app.settings import Settings
from pi_plugins.models.start_model import choose_model, wants_local_models
from pi_plugins.cli.run_args import RunArgs
from pi_plugins.cli.wiring import model_wish
from pi_plugins.providers import local
from pi_plugins.providers.local import BUDGET_S, DEFAULT_CONTEXT, discover

EXPECTED_ID = {"ollama": "qwen2.5-coder:0.5b", "llama.cpp": "qwen2.5-coder-0.5b",
               "lmstudio": "qwen2.5-coder-0.5b", "vllm": "qwen2.5-coder-0.5b"}


@pytest.fixture(params=KINDS)
def stub(request):
    with LocalServer(request.param) as server:
        yield server


# ---------------------------------------------------------------- each kind, end to end


@pytest.mark.process
def test_the_models_of_a_local_server_appear_with_no_configuration(tmp_path, stub):
    home = Home(tmp_path, [stub.url])
    done = home.run("--list-models")
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    assert header.split() == ["provider", "model", "context", "max-out", "thinking", "images", "source"]
    cells = row.split()
    assert cells[:2] == [stub.kind, EXPECTED_ID[stub.kind]] and cells[-1] == "local"
    # lmstudio's /v1/models says no context length: the conservative default
    assert cells[2] == ("8.2K" if stub.kind == "lmstudio" else "32.8K")


@pytest.mark.process
def test_pi_print_answers_through_a_local_server(tmp_path, stub):
    stub.push(Reply(text=f"Hello from {stub.kind}"))
    home = Home(tmp_path, [stub.url])
    done = home.run("-p", "say hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Hello from {stub.kind}"
    notice = [line for line in done.stderr.splitlines() if line.startswith("Using ")]
    assert notice == [f"Using {stub.kind}/{EXPECTED_ID[stub.kind]}, found on a local server at {stub.url}/v1 "
                      "(no model or API key is configured; `pi --list-models` lists what was found)"]
    assert len(stub.requests) == 1  # one answer, one request
    body = stub.requests[-1].body
    assert stub.requests[-1].path == "/v1/chat/completions" and body["model"] == EXPECTED_ID[stub.kind]
    # the shape local chat templates accept: the user's text as one string, max_tokens
    assert body["messages"][-1] == {"role": "user", "content": "say hello"}
    assert "max_tokens" in body and "max_completion_tokens" not in body and "store" not in body


@pytest.mark.process
def test_nothing_is_probed_offline_or_when_a_model_is_configured(tmp_path, stub):
    home = Home(tmp_path, [stub.url])
    for args, env in [(("--offline", "--list-models"), None), (("--list-models",), {"PI_OFFLINE": "1"})]:
        done = home.run(*args, env=env)
        assert done.returncode == 0, done.stderr
        assert "local" not in done.stdout.split()
    (home.agent_dir / "models.json").write_text(json.dumps(
        {"providers": {"mine": {"baseUrl": stub.url + "/v1", "api": "openai-completions",
                                "models": [{"id": "configured"}]}}}))
    done = home.run("--list-models")
    assert done.returncode == 0 and "mine" in done.stdout and "local" not in done.stdout.split()
    assert stub.gets == [] and stub.requests == []


# ---------------------------------------------------------------- RPC and the registry


@pytest.mark.process
def test_rpc_lists_the_found_models_in_get_available_models(tmp_path):
    with LocalServer("ollama", ["qwen2.5-coder:0.5b", "llama3.2:1b"]) as ollama, \
            LocalServer("vllm", ["Qwen/Qwen2.5-0.5B"]) as vllm:
        home = Home(tmp_path, [ollama.url, vllm.url])
        process = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "--mode", "rpc", "--no-session"],
                                   cwd=home.cwd, env=home.env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        client = RpcClient(process)
        try:
            models = client.ok("get_available_models")["models"]
            state = client.ok("get_state")
        finally:
            client.close()
    keys = [f"{m['provider']}/{m['id']}" for m in models]
    assert keys == ["ollama/qwen2.5-coder:0.5b", "ollama/llama3.2:1b", "vllm/Qwen/Qwen2.5-0.5B"]
    assert state["model"]["provider"] == "ollama" and state["model"]["id"] == "qwen2.5-coder:0.5b"


def _registry(tmp_path, env=None):
    plugins = Plugins()
    plugins.register(local, "local_models")
    return plugins, ModelRegistry([], agent_dir=tmp_path, env=env or {})


def test_server_facts_set_context_tools_and_images(tmp_path):
    with LocalServer("ollama", ["plain:1b", "seeing:3b"], context=4096, tools=False) as ollama, \
            LocalServer("llama.cpp", context=None, vision=True) as llama:
        plugins, registry = _registry(tmp_path)
        settings = Settings({"localModels": {"endpoints": [ollama.url, llama.url]}})
        added = asyncio.run(registry.discover(plugins, settings))
    by_key = {m.key: m for m in added}
    plain = by_key["ollama/plain:1b"]
    assert plain.context_window == 4096 and plain.compat["supportsTools"] is False
    served = by_key["llama.cpp/qwen2.5-coder-0.5b"]
    assert served.context_window == DEFAULT_CONTEXT and served.input == ["text", "image"]
    assert "supportsTools" not in served.compat
    assert [m.key for m in registry.available()] == list(by_key)


def test_a_model_the_server_gives_no_tools_is_sent_none(tmp_path):
    from pi_core.protocol.messages import TextContent, UserMessage
    from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
    from pi_plugins.providers.openai_completions import build_body, resolve_compat

    with LocalServer("ollama", context=4096, tools=False) as ollama:
        model = asyncio.run(discover([ollama.url]))[0]
    context = LlmContext(system_prompt="s", messages=[UserMessage(content=[TextContent("a"), TextContent("b")])],
                         tools=[ToolSpec(name="read", description="read", parameters={"type": "object"})])
    body = build_body(model, context, StreamOptions(), resolve_compat(model))
    assert "tools" not in body
    assert body["messages"][-1] == {"role": "user", "content": "a\nb"}
    assert body["max_tokens"] == 1024  # a quarter of the 4096-token window


def test_an_assistant_tool_call_goes_with_empty_string_content(tmp_path):
    from pi_core.protocol.messages import (
        AssistantMessage,
        TextContent,
        ToolCall,
        ToolResultMessage,
        UserMessage,
    )
    from pi_core.protocol.provider import LlmContext, StreamOptions
    from pi_plugins.providers.openai_completions import build_body, resolve_compat

    with LocalServer("llama.cpp") as llama:
        model = asyncio.run(discover([llama.url]))[0]
    call = AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={"path": "a"})],
                            api=model.api, provider=model.provider, model=model.id, stop_reason="toolUse")
    context = LlmContext(system_prompt="s", messages=[
        UserMessage(content=[TextContent("read a")]), call,
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent("x")])])
    body = build_body(model, context, StreamOptions(), resolve_compat(model))
    assert body["messages"][2]["content"] == "" and body["messages"][2]["tool_calls"]


# ---------------------------------------------------------------- when to look


@pytest.mark.parametrize("args, env, settings, looks", [
    (RunArgs(), {}, {}, True),
    (RunArgs(offline=True), {}, {}, False),
    (RunArgs(), {"PI_OFFLINE": "1"}, {}, False),
    (RunArgs(model="openai/gpt-4o"), {}, {}, False),
    (RunArgs(model="llama.cpp/SmolLM2-360M"), {}, {}, True),  # not known: its server may be up
    (RunArgs(model="SmolLM2-360M", api_key="sk-x"), {}, {}, True),
    (RunArgs(model="llama.cpp/SmolLM2-360M", offline=True), {}, {}, False),
    (RunArgs(model="SmolLM2-360M"), {}, {"localModels": {"enabled": False}}, False),
    (RunArgs(api_key="sk-x"), {}, {}, False),
    (RunArgs(), {}, {"defaultModel": "openai/gpt-4o"}, False),
    (RunArgs(), {}, {"defaultModel": "ollama/qwen2.5-coder:0.5b"}, True),  # picked earlier: look again
    (RunArgs(), {}, {"localModels": {"enabled": False}}, False),
    (RunArgs(), {"OPENAI_API_KEY": "sk-x"}, {}, False),  # a key wins
    (RunArgs(), {"OPENAI_API_KEY": "sk-x"}, {"localModels": {"enabled": True}}, True),
])
def test_local_servers_are_looked_for_only_when_nothing_is_configured(tmp_path, args, env, settings, looks):
    from pi_plugins.providers.catalogue import builtin_models

    registry = ModelRegistry(builtin_models(), agent_dir=tmp_path, env=env)
    assert wants_local_models(registry, Settings(settings), env=env, **model_wish(args)) is looks


def test_an_explicit_key_keeps_its_model_the_default(tmp_path):
    from pi_plugins.providers.catalogue import builtin_models

    with LocalServer("ollama") as ollama:
        plugins = Plugins()
        plugins.register(local, "local_models")
        registry = ModelRegistry(builtin_models(), agent_dir=tmp_path, env={"ANTHROPIC_API_KEY": "sk-x"})
        settings = Settings({"localModels": {"enabled": True, "endpoints": [ollama.url]}})
        asyncio.run(registry.discover(plugins, settings))
    model = choose_model(registry, settings)[0]
    assert model.provider == "anthropic"
    assert "ollama/qwen2.5-coder:0.5b" in [m.key for m in registry.available()]


# ---------------------------------------------------------------- the time budget


def _timed(endpoints):
    started = time.monotonic()
    found = asyncio.run(discover(endpoints))
    return found, time.monotonic() - started


def test_the_probe_keeps_its_budget_when_nothing_listens():
    found, took = _timed([f"http://127.0.0.1:{free_port()}" for _ in range(4)])
    assert found == [] and took < BUDGET_S


def test_the_probe_keeps_its_budget_when_a_port_accepts_but_never_answers():
    with SilentPort() as silent, LocalServer("vllm") as vllm:
        found, took = _timed([silent.url, vllm.url])
    assert BUDGET_S <= took < BUDGET_S + 0.1
    assert [m.key for m in found] == ["vllm/qwen2.5-coder-0.5b"]  # what answered in time still counts


def test_the_first_endpoint_in_list_order_that_answered_comes_first():
    with LocalServer("lmstudio", ["b-model"]) as lmstudio, LocalServer("ollama", ["a-model:1b"]) as ollama:
        found, _ = _timed([f"http://127.0.0.1:{free_port()}", lmstudio.url, ollama.url])
    assert [m.key for m in found] == ["lmstudio/b-model", "ollama/a-model:1b"]


def test_two_servers_of_one_kind_get_distinct_providers():
    with LocalServer("ollama") as one, LocalServer("ollama") as two:
        found, _ = _timed([one.url, two.url + "/v1"])
        second = two.url
    assert [m.provider for m in found] == ["ollama", f"ollama-{second.rsplit(':', 1)[1]}"]
    assert found[1].base_url == second + "/v1"


def test_an_endpoint_may_carry_v1_or_a_trailing_slash():
    with LocalServer("llama.cpp") as llama:
        found, _ = _timed([llama.url + "/v1/"])
        url = llama.url
    assert [m.base_url for m in found] == [url + "/v1"]
    assert "/props" in llama.gets and "/v1/models" in llama.gets


def test_a_server_answering_garbage_is_skipped_not_fatal():
    import socket
    import threading

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)

    def answer():
        for _ in range(3):
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!")
            conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        with LocalServer("vllm") as vllm:
            found, took = _timed([f"http://127.0.0.1:{sock.getsockname()[1]}", vllm.url])
    finally:
        sock.close()
    assert [m.provider for m in found] == ["vllm"] and took < BUDGET_S
