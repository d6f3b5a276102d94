"""Hooks of providers and models: bring your own wire API and models, and see or change
each native request and response.

Run it: python docs/examples/hooks_providers.py
(The "echo" provider below answers in-process, so this runs offline.)
"""

import asyncio

from pi_core import Model, ModelCost, create_harness, hookimpl
from pi_plugins.providers.kit import MessageBuilder


class EchoProvider:
    """A provider for the wire API "echo": it repeats the last user message. A real one
    builds its native payload, sends it with httpx and translates the stream."""

    api = "echo"

    async def stream(self, model, context, options):
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        last = context.messages[-1].content[0].text
        payload = await options.prepare_payload({"model": model.id, "input": last, "shout": False})
        headers = {"x-echo-client": "pi", "x-tracking": "1"}
        if options.on_headers is not None:  # before_provider_headers (pi 1.6)
            headers = {k: v for k, v in (await options.on_headers(headers)).items() if v is not None}
        print("headers sent:", headers)
        await options.response(200, {"x-echo-version": "1"})
        yield builder.start()
        yield builder.text_start()
        text = payload["input"].upper() if payload["shout"] else payload["input"]
        yield builder.text_delta(f"You said: {text}")
        yield builder.close()
        yield builder.done()  # failures end with builder.error(...), never an exception


class ProviderTour:
    @hookimpl
    def register_providers(self, ctx):
        return [EchoProvider()]  # collected by api: a later "echo" provider replaces it

    @hookimpl
    def register_models(self, ctx):
        return [Model(id="echo-1", provider="local-echo", api="echo", name="Echo 1",
                      context_window=8192, max_tokens=1024, cost=ModelCost(input=0, output=0))]

    @hookimpl
    async def discover_models(self, settings, ctx):
        # Only when nothing is configured and not offline: models found on servers
        # (the built-in local_models plugin probes Ollama, llama.cpp, LM Studio, vLLM).
        return [Model(id="echo-found", provider="local-echo", api="echo", context_window=4096)]

    @hookimpl
    def before_provider_request(self, payload, model, ctx):
        print(f"before_provider_request: {model.key} {payload}")
        return {**payload, "shout": True}  # the payload actually sent

    @hookimpl
    def before_provider_headers(self, headers, model, ctx):
        print(f"before_provider_headers: {model.key} {headers}")
        return {**headers, "x-session": "demo", "x-tracking": None}  # None removes one

    @hookimpl
    def after_provider_response(self, event, ctx):
        print(f"after_provider_response: {event.status} {event.headers}")


async def main() -> None:
    from pi_core import ModelRegistry, Plugins

    plugins = Plugins()
    plugins.register(ProviderTour())
    # The registry pi builds at start-up: every plugin's models, then models.json.
    registry = await ModelRegistry.from_plugins(plugins, models_json=False)
    model = registry.find("local-echo", "echo-1")
    print("registered:", model.key, model.name, model.context_window)
    found = await registry.discover(plugins)  # what pi does when no model has a key
    print("discovered:", [m.key for m in found], "local:", sorted(registry.local))
    harness = await create_harness(ProviderTour(), model=model)
    await harness.prompt("hello there")
    print("answer:", harness.messages[-1].text)


if __name__ == "__main__":
    asyncio.run(main())
