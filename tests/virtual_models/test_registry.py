"""Virtual models in the model registry (pi 1.6's rules): where they are available, and
registering one while running (``ctx.model_registry.register_virtual_model``, pi's
``modelRuntime.registerVirtualModel``)."""

from __future__ import annotations

import asyncio

import pytest

from pi_core import Model, ModelRegistry, Route, VirtualModel, hookimpl
from pi_core.app.settings import Settings
from pi_plugins.sdk import create_harness
from support.llm_server import COMPLETIONS, Reply


def registry(tmp_path, *models, env=None):
    return ModelRegistry(models, agent_dir=tmp_path, env=env or {}, models_json=False)


def to(model_key):
    return lambda request, ctx: Route(model=model_key)


def test_a_virtual_model_of_its_own_provider_is_always_available(tmp_path):
    models = registry(tmp_path, VirtualModel(provider="router", id="auto", route=to("x/y")))
    assert [m.key for m in models.available()] == ["router/auto"]


def test_on_a_physical_provider_it_is_available_with_that_providers_credentials(tmp_path):
    physical = Model(id="claude", provider="anthropic", api="anthropic-messages", base_url="https://api.anthropic.com")
    virtual = VirtualModel(provider="anthropic", id="auto", route=to("anthropic/claude"))
    assert registry(tmp_path, physical, virtual).available() == []
    keyed = registry(tmp_path, physical, virtual, env={"ANTHROPIC_API_KEY": "k"})
    assert [m.key for m in keyed.available()] == ["anthropic/claude", "anthropic/auto"]


def test_registering_one_while_running_lists_it_until_it_is_unregistered(tmp_path):
    models = registry(tmp_path)
    models.register_virtual_model(VirtualModel(provider="router", id="late", route=to("x/y")))
    assert models.find("router", "late") is not None
    assert models.unregister_provider("router") is False  # pi: unregisterProvider leaves it
    assert models.find("router", "late") is not None
    assert models.unregister_virtual_model("router", "late") is True
    assert models.find("router", "late") is None
    assert models.unregister_virtual_model("router", "late") is False


def test_the_key_of_a_physical_model_is_refused_in_pi16s_words(tmp_path):
    models = registry(tmp_path, Model(id="small", provider="local", api="openai-completions"))
    with pytest.raises(ValueError, match="Virtual model local/small conflicts with a physical model."):
        models.register_virtual_model(VirtualModel(provider="local", id="small", route=to("local/small")))


def test_a_model_registered_while_running_is_selected_and_routed(tmp_path, server, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    server.push(Reply(text="routed"))

    class Late:
        @hookimpl
        def register_models(self, ctx):
            return [server.model(COMPLETIONS, id="small-model", provider="local")]

        @hookimpl
        def session_start(self, event, ctx):
            ctx.model_registry.register_virtual_model(
                VirtualModel(provider="router", id="late", route=to("local/small-model")))

    async def scenario():
        harness = await create_harness(Late(), model="local/small-model", builtins=True, cwd=str(tmp_path),
                                       settings=Settings({}))
        await harness.set_model(harness.model_registry.find("router", "late"))
        await harness.prompt("hi")
        await harness.close()
        return harness

    harness = asyncio.run(scenario())
    assert harness.model.key == "router/late"
    assert server.requests[-1].model == "small-model"
    assert harness.messages[-1].text == "routed"


def test_a_plugins_virtual_model_on_a_physical_models_key_is_refused_in_pi16s_words(tmp_path):
    physical = Model(id="m", provider="local", api="openai-completions", base_url="http://127.0.0.1:9/v1")
    models = registry(tmp_path, physical, VirtualModel(provider="local", id="m", route=to("local/m")))
    assert [(m.key, m.api) for m in models.models] == [("local/m", "openai-completions")]
    assert models.errors == ["Virtual model local/m conflicts with a physical model."]


def test_the_same_virtual_key_twice_keeps_the_later_as_pi16_does(tmp_path):
    first = VirtualModel(provider="router", id="auto", name="First", route=to("x/y"))
    second = VirtualModel(provider="router", id="auto", name="Second", route=to("x/y"))
    assert [m.name for m in registry(tmp_path, first, second).models] == ["Second"]


def test_the_footer_shows_the_routed_model_and_level_beside_the_selection_as_pi16(tmp_path, server, monkeypatch):
    """pi 1.6's ``auto • high → gpt-5.6-luna • medium``: the selection, then the physical
    model of the latest answer and the level it was sent with."""
    from pi_plugins.interactive.footer import footer

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    server.push(Reply(text="routed"))

    class Router:
        @hookimpl
        def register_models(self, ctx):
            return [server.model(COMPLETIONS, id="small-model", provider="local", reasoning=True),
                    VirtualModel(provider="router", id="auto", thinking_levels=["low", "high"],
                                 route=lambda request, ctx: Route(model="local/small-model", thinking_level="medium"))]

    async def scenario():
        harness = await create_harness(Router(), model="router/auto", thinking_level="high", builtins=True,
                                       cwd=str(tmp_path), settings=Settings({}))
        before = _plain(footer(harness, 100))
        await harness.prompt("hi")
        await harness.close()
        return harness, before

    harness, before = asyncio.run(scenario())
    assert before.rstrip().endswith("auto • high")
    assert _plain(footer(harness, 100)).rstrip().endswith("auto • high → small-model • medium")


def _plain(renderable) -> str:
    import io

    from rich.console import Console

    console = Console(width=100, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()
