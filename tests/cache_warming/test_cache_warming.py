"""pi 1.6's prompt-cache warming in-process: the last request sent again with a one-token
cap before the cache entry expires, only where it pays, written as a ``usage`` entry of
kind ``cache_warm``; plugins overrule the decision; it stops when the conversation moves
on or the setting says so. The refresh delay is made short (pi's is 90% of the cache's
life) and each test waits on the events, not on the clock."""

from __future__ import annotations

import asyncio
import json

import attrs
import pytest

from pi_core import Harness, ModelCost, Usage, calculate_cost, hookimpl
from pi_core.app.settings import Settings
from pi_core.plugins import Plugins
from pi_core.session import Session
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins import app_messages, cache_warming, local_environment
from pi_plugins.cache_warming import economics

PRICED = ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)  # Claude Sonnet's prices
WORTH_KEEPING = 400_000  # prompt tokens whose cache pays to keep warm while idle at those prices
NOT_WORTH_IT = 20_000
PI_DELAY = economics.warm_delay_ms  # pi's rule, before the tests shorten it


class RecordingProvider(ScriptedProvider):
    """The scripted model, remembering each request's options; a one-token request (a
    refresh) is answered as a provider answers a cache hit: the prompt read from the cache."""

    def __init__(self, script):
        super().__init__(script)
        self.options: list = []
        self.prompt_tokens = WORTH_KEEPING

    async def stream(self, model, context, options):
        self.options.append(options)
        if options.max_tokens == 1:
            usage = calculate_cost(model, Usage(cache_read=self.prompt_tokens, output=1,
                                                total_tokens=self.prompt_tokens + 1))
            self.script.insert(0, Reply(text=".", usage=usage))
        async for event in super().stream(model, context, options):
            yield event


def priced_model(**changes):
    return scripted_model(cost=PRICED, prompt_cache={"short": 300, "long": 3600}, **changes)


def answer(prompt_tokens: int = WORTH_KEEPING) -> Reply:
    usage = calculate_cost(priced_model(), Usage(input=10, output=5, cache_write=prompt_tokens - 10,
                                                 total_tokens=prompt_tokens + 5))
    return Reply(text="done", usage=usage)


class Watch:
    """What the harness and the decision hook said, as events to wait on."""

    def __init__(self) -> None:
        self.appended: list = []
        self.decisions: list = []
        self.answer: dict | None = None  # what the decision hook answers
        self.warmed = asyncio.Event()
        self.decided = asyncio.Event()

    def __call__(self, event) -> None:
        if event.type == "entry_appended" and getattr(event.entry, "kind", None) == "cache_warm":
            self.appended.append(event.entry)
            self.warmed.set()

    @hookimpl
    def cache_warming_decision(self, event, ctx):
        self.decisions.append(event)
        self.decided.set()
        return self.answer


def make(tmp_path, script, *, mode: str | None = "idle", model=None):
    provider = RecordingProvider(script)
    watch = Watch()
    plugins = Plugins()
    plugins.register(provider, "scripted")
    plugins.register(app_messages, "app_messages")
    plugins.register(local_environment, "local_environment")
    plugins.register(cache_warming, "cache_warming")
    plugins.register(watch, "watch")
    session = Session.create(tmp_path / "work", tmp_path / "sessions")
    harness = Harness(plugins=plugins, session=session, model=model or priced_model(), cwd=str(tmp_path),
                      settings=Settings({"cacheWarming": mode} if mode else {}))
    harness.subscribe(watch)
    return harness, provider, watch


@pytest.fixture(autouse=True)
def quick_refreshes(monkeypatch):
    monkeypatch.setattr(economics, "warm_delay_ms", lambda ttl_ms: 20 if ttl_ms > 10_000 else None)


def lines(session) -> list[dict]:
    return [json.loads(line) for line in session.file.read_text().splitlines()]


async def started(harness):
    await harness.start()
    return harness


def test_an_idle_session_sends_its_last_request_again_with_a_one_token_cap(tmp_path):
    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()])
        await started(harness)
        await harness.prompt("hello")
        await asyncio.wait_for(watch.warmed.wait(), 5)
        cache_warming.warmer_of(harness.ctx).cancel()
        return harness, provider, watch

    harness, provider, watch = asyncio.run(scenario())
    real, refresh = provider.requests[0], provider.requests[1]
    assert refresh is real  # the same system prompt, messages and tools: the same cache entry
    options = provider.options[1]
    assert (options.max_tokens, options.max_retries, options.disable_continuation) == (1, 0, True)
    assert provider.options[0].max_tokens is None
    usage_lines = [line for line in lines(harness.session) if line["type"] == "usage"]
    assert usage_lines[0]["kind"] == "cache_warm"
    assert (usage_lines[0]["provider"], usage_lines[0]["model"]) == ("scripted", "scripted-model")
    assert usage_lines[0]["usage"]["cacheRead"] == WORTH_KEEPING
    assert "note" not in usage_lines[0]
    assert watch.appended[0].kind == "cache_warm"  # entry_appended, as pi 1.6 emits it
    assert [m.role for m in harness.session.build_context().messages] == ["user", "assistant"]
    assert watch.decisions[0].action == "warm"


def test_refreshes_count_in_the_session_totals(tmp_path):
    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()])
        await started(harness)
        await harness.prompt("hello")
        before = harness.stats()
        await asyncio.wait_for(watch.warmed.wait(), 5)
        cache_warming.warmer_of(harness.ctx).cancel()
        return before, harness.stats(), watch

    before, after, watch = asyncio.run(scenario())
    warm_cost = watch.appended[0].usage.cost.total
    assert after["cost"] == pytest.approx(before["cost"] + warm_cost)


def test_a_refresh_that_would_not_pay_is_not_sent(tmp_path):
    async def scenario():
        harness, provider, watch = make(tmp_path, [answer(NOT_WORTH_IT)])
        await started(harness)
        await harness.prompt("hello")
        await asyncio.wait_for(watch.decided.wait(), 5)
        await asyncio.sleep(0.05)
        return provider, watch, cache_warming.warmer_of(harness.ctx)

    provider, watch, warmer = asyncio.run(scenario())
    assert len(provider.requests) == 1
    assert watch.decisions[0].action == "stop"
    assert watch.decisions[0].continuation_probability == 0.15  # idle
    assert warmer.run is None and warmer.reason == "expected savings below threshold"


def test_a_plugin_can_overrule_the_decision_either_way(tmp_path):
    async def scenario(prompt_tokens: int, verdict: str):
        harness, provider, watch = make(tmp_path / verdict, [answer(prompt_tokens)])
        watch.answer = {"action": verdict}
        provider.prompt_tokens = prompt_tokens
        await started(harness)
        await harness.prompt("hello")
        if verdict == "warm":
            await asyncio.wait_for(watch.warmed.wait(), 5)
        else:
            await asyncio.wait_for(watch.decided.wait(), 5)
            await asyncio.sleep(0.05)
        warmer = cache_warming.warmer_of(harness.ctx)
        reason = warmer.reason
        warmer.cancel()
        return provider, watch, harness, reason

    provider, watch, harness, _ = asyncio.run(scenario(NOT_WORTH_IT, "warm"))
    assert len(provider.requests) >= 2
    assert [line.get("note") for line in lines(harness.session) if line["type"] == "usage"][0] == "extension override"
    provider, watch, harness, reason = asyncio.run(scenario(WORTH_KEEPING, "stop"))
    assert len(provider.requests) == 1 and reason == "stopped by extension"


def test_a_decision_hook_that_raises_leaves_pis_decision(tmp_path):
    class Broken:
        @hookimpl
        def cache_warming_decision(self, event, ctx):
            raise RuntimeError("boom")

    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()])
        harness.plugins.register(Broken(), "broken")
        await started(harness)
        await harness.prompt("hello")
        await asyncio.wait_for(watch.warmed.wait(), 5)
        cache_warming.warmer_of(harness.ctx).cancel()
        return harness

    harness = asyncio.run(scenario())
    assert any(error.hook == "cache_warming_decision" for error in harness.plugins.errors)


@pytest.mark.parametrize("mode, reason", [("streaming", "agent run settled"), ("off", "cache warming disabled")])
def test_streaming_mode_stops_when_the_run_settles_and_off_never_starts(tmp_path, mode, reason):
    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()], mode=mode)
        await started(harness)
        await harness.prompt("hello")
        await asyncio.sleep(0.1)
        return provider, cache_warming.warmer_of(harness.ctx)

    provider, warmer = asyncio.run(scenario())
    assert len(provider.requests) == 1
    assert warmer.run is None and warmer.reason == reason


def test_a_model_without_a_cache_lifetime_is_never_warmed(tmp_path):
    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()], model=attrs.evolve(priced_model(), prompt_cache=None))
        await started(harness)
        await harness.prompt("hello")
        await asyncio.sleep(0.1)
        return provider, cache_warming.warmer_of(harness.ctx)

    provider, warmer = asyncio.run(scenario())
    assert len(provider.requests) == 1 and warmer.reason == "cache lifetime unavailable"


def test_another_model_ends_warming_before_the_refresh(tmp_path, monkeypatch):
    monkeypatch.setattr(economics, "warm_delay_ms", lambda ttl_ms: 150)

    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()])
        await started(harness)
        await harness.prompt("hello")
        await harness.set_model(attrs.evolve(priced_model(), id="other-model"))
        await asyncio.sleep(0.3)
        return provider, cache_warming.warmer_of(harness.ctx)

    provider, warmer = asyncio.run(scenario())
    assert len(provider.requests) == 1
    assert warmer.run is None and warmer.reason == "conversation context changed"


def test_cache_retention_none_disables_warming(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CACHE_RETENTION", "none")

    async def scenario():
        harness, provider, watch = make(tmp_path, [answer()])
        await started(harness)
        await harness.prompt("hello")
        return cache_warming.warmer_of(harness.ctx)

    assert asyncio.run(scenario()).reason == "request disabled prompt caching"


def test_the_numbers_are_pi_16s():
    assert PI_DELAY(300_000) == 270_000  # 90% of the life
    assert PI_DELAY(60_000) == 50_000  # ten seconds before the end
    assert PI_DELAY(11_000) == 1_000
    assert PI_DELAY(10_000) is None
    idle = economics.evaluate(priced_model(), WORTH_KEEPING, "idle")
    assert idle.action == "warm" and idle.continuation_probability == 0.15
    assert idle.miss_cost == pytest.approx(WORTH_KEEPING * (3.75 - 0.3) / 1e6)
    assert idle.warm_cost == pytest.approx(WORTH_KEEPING * 0.3 / 1e6 + 15 / 1e6)
    assert economics.evaluate(priced_model(), NOT_WORTH_IT, "idle").action == "stop"
    assert economics.evaluate(priced_model(), NOT_WORTH_IT, "streaming").action == "warm"
    free = economics.evaluate(scripted_model(), WORTH_KEEPING, "streaming")
    assert not free.economics_available and free.action == "stop"
    thinking = attrs.evolve(priced_model(), api="anthropic-messages", reasoning=True)
    assert not economics.replayable(thinking, attrs.evolve(_options(), thinking_level="high"))
    assert economics.replayable(attrs.evolve(thinking, compat={"forceAdaptiveThinking": True}),
                                attrs.evolve(_options(), thinking_level="high"))
    # a model without reasoning gets no thinking, whatever the level says
    assert economics.replayable(attrs.evolve(thinking, reasoning=False), attrs.evolve(_options(), thinking_level="high"))


def _options():
    from pi_core import StreamOptions

    return StreamOptions()


def test_session_info_says_when_the_next_decision_is_due_and_why_warming_stopped(tmp_path, monkeypatch):
    from pi_plugins.cache_warming.status import session_lines, status_line

    monkeypatch.setattr(economics, "warm_delay_ms", lambda ttl_ms: 60_000)

    async def scheduled():
        harness, provider, watch = make(tmp_path / "a", [answer()])
        await started(harness)
        await harness.prompt("hello")
        lines = session_lines(harness.ctx)
        cache_warming.warmer_of(harness.ctx).cancel()
        return lines

    assert asyncio.run(scheduled()) == [
        "Mode: idle",
        "Status: Decision in 1m (15% continuation probability, expected savings $0.087 >= $0.050 -> warm)",
        "Cache miss penalty: $1.380", "Refresh cost: $0.120"]
    monkeypatch.setattr(economics, "warm_delay_ms", lambda ttl_ms: 20)

    async def stopped():
        harness, provider, watch = make(tmp_path / "b", [answer(NOT_WORTH_IT)])
        await started(harness)
        await harness.prompt("hello")
        await asyncio.wait_for(watch.decided.wait(), 5)
        await asyncio.sleep(0.05)
        return status_line(cache_warming.warmer_of(harness.ctx))

    assert asyncio.run(stopped()) == \
        "Stopped (15% continuation probability, expected savings $0.004 < $0.050 -> stop)"
    assert status_line(None) == "Inactive (cache warming unavailable)"
