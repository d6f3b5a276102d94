"""What real local servers do that the first discovery did not expect (issue 24, found
with SmolLM2 behind llama-cpp-python's server): a model named on the command line, in
``pi batch`` or in the SDK is looked for on them; llama-cpp-python names a model by its
GGUF file's path, runs one request at a time and stops a running answer when another
arrives, and reports no usage. Each against a stub server on 127.0.0.1."""

import asyncio
import json
import subprocess
import sys

import pytest

from pi_core import Plugins
from pi_plugins.models.registry import ModelRegistry
from pi_core.app.settings import Settings
from pi_core.protocol.usage import final_assistant
from pi_plugins.providers import local
from pi_plugins.providers.local import discover
from support.llm_server import Reply
from support.local_servers import Home, LocalServer, free_port
from support.rpc import RpcClient

GGUF = "/models/smollm2/SmolLM2-360M-Instruct-Q8_0.gguf"
NAME = "SmolLM2-360M-Instruct-Q8_0"


def llama_cpp_python(**kwargs):
    """llama-cpp-python's server as it is by default: no /props, the model named by its
    file, one request at a time, interrupted by the next, no usage."""
    return LocalServer("llama.cpp", [GGUF], props=False, interrupts=True, **kwargs)


def write_tasks(path, tasks):
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))


def read_results(path):
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


# ---------------------------------------------------------------- naming the model (3, 7)


@pytest.mark.process
def test_a_gguf_model_is_listed_by_its_file_name_and_named_so_on_the_command_line(tmp_path):
    with llama_cpp_python() as server:
        server.default = Reply(text="hi from smol")
        home = Home(tmp_path, [server.url])
        listed = home.run("--list-models")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.splitlines()[1].split()[:2] == ["llama.cpp", NAME]
        for pattern in (f"llama.cpp/{NAME}", NAME):
            done = home.run("-p", "--model", pattern, "hello")
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip() == "hi from smol"
            notice = [line for line in done.stderr.splitlines() if line.startswith("Using ")]
            assert notice == [f"Using llama.cpp/{NAME}, found on a local server at {server.url}/v1 "
                              "(`pi --list-models` lists what was found)"]
        # the server still gets the id it gave
        assert [r.body["model"] for r in server.requests] == [GGUF, GGUF]


@pytest.mark.process
def test_a_model_named_that_no_server_has_is_still_not_found(tmp_path):
    with llama_cpp_python() as server:
        home = Home(tmp_path, [server.url])
        done = home.run("-p", "--model", "no-such-model", "hello")
        assert "/v1/models" in server.gets  # it looked
    assert done.returncode != 0
    assert 'Model "no-such-model" not found' in done.stderr
    assert server.requests == []


def test_a_model_id_that_is_a_path_becomes_the_file_name_and_other_ids_stay():
    assert local.file_model_name(GGUF) == NAME
    assert local.file_model_name("C:\\models\\Phi-3.GGUF") == "Phi-3"
    assert local.file_model_name("tinyllama.gguf") == "tinyllama"
    assert local.file_model_name("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"  # a repo, not a path
    assert local.file_model_name("qwen2.5-coder:0.5b") == "qwen2.5-coder:0.5b"


def test_two_files_of_one_name_keep_apart():
    with LocalServer("llama.cpp", ["/a/model.gguf", "/b/model.gguf"]) as server:
        found = asyncio.run(discover([server.url]))
    assert [(m.id, (m.compat or {}).get("requestModel")) for m in found] == [
        ("model", "/a/model.gguf"), ("/b/model.gguf", None)]


@pytest.mark.process
def test_list_models_names_the_endpoints_it_tried_when_none_answered(tmp_path):
    endpoints = [f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"]
    home = Home(tmp_path, endpoints)
    done = home.run("--list-models")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "No models available. Use /login to log into a provider via OAuth or API key. See:"
    assert done.stdout.splitlines()[1].endswith("providers.md")
    assert done.stdout.splitlines()[3:] == [
        f"No local model server answered at {', '.join(endpoints)} "
        "(the setting localModels.endpoints changes the list)."]


# ---------------------------------------------------------------- pi batch and the SDK (4)


@pytest.mark.process
def test_pi_batch_finds_a_local_server_with_no_configuration_and_by_name(tmp_path):
    with LocalServer("llama.cpp", [GGUF], props=False) as server:
        server.default = Reply(text="batch answer")
        home = Home(tmp_path, [server.url])
        write_tasks(tmp_path / "tasks.jsonl", [{"id": "plain", "prompt": "a"},
                                               {"id": "named", "prompt": "b", "model": f"llama.cpp/{NAME}"}])
        for extra in ((), ("--model", NAME)):
            out = tmp_path / f"results{len(extra)}.jsonl"
            done = home.run("batch", str(tmp_path / "tasks.jsonl"), "--out", str(out), *extra)
            assert done.returncode == 0, done.stderr
            results = read_results(out)
            assert {i: (r["text"], r.get("error")) for i, r in results.items()} == {
                "plain": ("batch answer", None), "named": ("batch answer", None)}


def test_the_sdk_finds_a_local_server_for_a_model_pattern_or_none(tmp_path, monkeypatch):
    from pi_plugins.models.registry import ModelNotFoundError
    from pi_plugins.sdk import create_harness

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_OFFLINE", raising=False)
    (tmp_path / "agent").mkdir()

    async def run(server, model):
        settings = Settings({"localModels": {"endpoints": [server.url]}})
        harness = await create_harness(model=model, builtins=True, cwd=str(tmp_path), settings=settings)
        try:
            produced = await harness.prompt("hi")
            return harness.model.key, final_assistant(produced).text
        finally:
            await harness.close()

    with llama_cpp_python() as server:
        server.default = Reply(text="sdk answer")
        assert asyncio.run(run(server, None)) == (f"llama.cpp/{NAME}", "sdk answer")
        assert asyncio.run(run(server, NAME)) == (f"llama.cpp/{NAME}", "sdk answer")
        with pytest.raises(ModelNotFoundError, match='Model "not-there" not found'):
            asyncio.run(run(server, "not-there"))


# ---------------------------------------------------------------- the server's slots (5)


def test_two_batch_tasks_against_a_one_slot_server_both_succeed(tmp_path):
    from pi_plugins.batch.runner import run_batch

    with llama_cpp_python() as server:
        # an answer takes a while, as on a small machine: long enough for a second
        # request sent at once to arrive while it streams and stop it
        server.default = Reply(text="a slow answer of many tokens", delta_size=2, delay=0.02)
        home = Home(tmp_path, [server.url])
        results = asyncio.run(run_batch(
            [{"id": "one", "prompt": "first"}, {"id": "two", "prompt": "second"}],
            concurrency=2, cwd=str(home.cwd), agent_dir=home.agent_dir, discover=False))
    assert sorted((r["id"], r["text"], r.get("error")) for r in results) == [
        ("one", "a slow answer of many tokens", None), ("two", "a slow answer of many tokens", None)]
    assert server.interrupted == [] and len(server.requests) == 2


def test_the_slots_come_from_props_else_one_and_vllm_is_not_limited():
    with LocalServer("llama.cpp", slots=4) as four, LocalServer("llama.cpp", props=False) as bare, \
            LocalServer("ollama") as ollama, LocalServer("vllm") as vllm:
        found = asyncio.run(discover([four.url, bare.url, ollama.url, vllm.url]))
    assert [(m.compat or {}).get("maxConcurrentRequests") for m in found] == [4, 1, 1, None]


def test_a_request_waiting_for_a_slot_ends_at_once_when_aborted_and_the_next_goes_on():
    import threading

    from pi_core.protocol.messages import TextContent, UserMessage
    from pi_core.protocol.provider import LlmContext, StreamOptions
    from pi_core.protocol.signal import AbortSignal
    from pi_plugins.providers.openai_completions import OpenAICompletionsProvider

    async def answer(model, signal=None, queued=None):
        async def sending(payload):  # the last step before the request waits for a slot
            if queued is not None:
                queued.set()
            return payload

        options = StreamOptions(signal=signal or AbortSignal(), on_payload=sending)
        context = LlmContext(system_prompt="", messages=[UserMessage(content=[TextContent("x")])])
        events = [e async for e in OpenAICompletionsProvider().stream(model, context, options)]
        return events[-1]

    async def scenario(server, model):
        first = asyncio.ensure_future(answer(model))
        await asyncio.to_thread(server.wait_for_requests, 1)
        signal, waiting, waiting_too = AbortSignal(), asyncio.Event(), asyncio.Event()
        queued = asyncio.ensure_future(answer(model, signal, waiting))
        third = asyncio.ensure_future(answer(model, queued=waiting_too))
        await waiting.wait()
        await waiting_too.wait()
        signal.abort()
        aborted = await asyncio.wait_for(queued, 10)  # while the first still holds the only slot
        hold.set()
        return await first, aborted, await third

    hold = threading.Event()
    with llama_cpp_python() as server:
        server.push(Reply(text="first", hold=hold, hold_after=2), Reply(text="third"))
        model = asyncio.run(discover([server.url]))[0]
        first, aborted, third = asyncio.run(scenario(server, model))
    assert first.type == "done" and first.message.text == "first"
    assert aborted.type == "error" and aborted.reason == "aborted"
    assert third.type == "done" and third.message.text == "third"
    assert len(server.requests) == 2 and server.interrupted == []


@pytest.mark.process
def test_an_answer_the_server_stopped_says_what_its_log_shows(tmp_path):
    with llama_cpp_python() as server:
        # what llama-cpp-python sends for an answer a request from elsewhere interrupted
        server.default = Reply(raw='data: {"id":"c1","object":"chat.completion.chunk","choices":'
                                   '[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n'
                                   "data: [DONE]\n\n")
        home = Home(tmp_path, [server.url], {"retry": {"enabled": False}})
        done = home.run("-p", "hello")
    assert done.returncode != 0
    assert "Connection lost" in done.stderr
    assert '"Disconnected from client"' in done.stderr and "--interrupt_requests False" in done.stderr
    assert "chat template" not in done.stderr


def test_the_docs_name_llama_cpp_python_interrupt_requests():
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    assert "--interrupt_requests False" in docs and "Disconnected from client" in docs


# ---------------------------------------------------------------- usage (6)


@pytest.mark.process
def test_usage_a_server_does_not_report_is_estimated_and_marked_so(tmp_path):
    with llama_cpp_python() as server:
        server.default = Reply(text="an answer of a few words", send_usage=False)
        home = Home(tmp_path, [server.url])
        process = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "--mode", "rpc", "--no-session"],
                                   cwd=home.cwd, env=home.env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        client = RpcClient(process)
        try:
            client.ok("prompt", message="count me")
            client.event("agent_end")
            stats = client.ok("get_session_stats")
        finally:
            client.close()
        write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "count me"}])
        done = home.run("batch", str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "out.jsonl"))
        assert done.returncode == 0, done.stderr
    tokens = stats["tokens"]
    assert tokens["estimated"] is True and tokens["input"] > 0 and tokens["output"] > 0
    assert stats["contextUsage"]["tokens"] == tokens["input"] + tokens["output"]  # compaction's count
    usage = read_results(tmp_path / "out.jsonl")["t"]["usage"]
    assert usage["estimated"] is True and usage["input"] > 0 and usage["output"] > 0


def test_a_reported_usage_is_kept_and_not_marked(tmp_path):
    with llama_cpp_python() as server:
        server.default = Reply(text="counted", usage={"input": 7, "output": 3})
        model = asyncio.run(discover([server.url]))[0]

        from pi_core.protocol.messages import TextContent, UserMessage
        from pi_core.protocol.provider import LlmContext, StreamOptions
        from pi_plugins.providers.openai_completions import OpenAICompletionsProvider

        async def answer():
            context = LlmContext(system_prompt="s", messages=[UserMessage(content=[TextContent("x")])])
            return [e async for e in OpenAICompletionsProvider().stream(model, context, StreamOptions())][-1]

        final = asyncio.run(answer())
    assert (final.message.usage.input, final.message.usage.output) == (7, 3)
    assert "estimated" not in final.message.usage.extra


@pytest.mark.process
def test_compaction_counts_the_estimate_of_a_server_that_reports_no_usage(tmp_path):
    """8192-token window (the server does not say), compaction above 6144: the system
    prompt and the first prompt are about 3,900 tokens each, so only a count that
    includes what the server was sent (the estimate) crosses the line."""
    text = "lorem ipsum " * 1300
    with llama_cpp_python() as server:
        server.default = Reply(text="## Goal\nA summary.", send_usage=False)
        home = Home(tmp_path, [server.url], {"compaction": {"keepRecentTokens": 10}})
        process = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "--mode", "rpc", "--no-session",
                                    "--system-prompt", text], cwd=home.cwd, env=home.env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        client = RpcClient(process)
        try:
            client.ok("prompt", message=text)
            first = client.event("agent_end")
            assert not client.events("compaction_start")
            client.ok("prompt", message="and now?")
            compaction = client.event("compaction_start", after=client.position(first) + 1)
            client.event("agent_end", after=client.position(first) + 1)
        finally:
            client.close()
    assert compaction["reason"] == "threshold"
