"""Virtual models (pi 1.6's ``registerVirtualModel``): one selectable model, ``router/auto``,
that sends short prompts to a small model and long ones to a big one, and keeps a count of
its routings as router state on the session branch.

Run it: python docs/examples/virtual_models.py
(The "echo" provider below answers in-process, so this runs offline.)
"""

import asyncio

from pi_core import Model, Route, VirtualModel, create_harness, hookimpl
from pi_plugins.providers.kit import MessageBuilder


class EchoProvider:
    """Answers with the name of the model that was asked: which one the router chose."""

    api = "echo"

    async def stream(self, model, context, options):
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        yield builder.start()
        yield builder.text_start()
        yield builder.text_delta(f"{model.id} answers")
        yield builder.close()
        yield builder.done()


def by_length(request, ctx):
    """``request.reason`` is user, continuation, retry or direct; ``request.previous`` and
    ``request.failed`` name the physical models that answered and failed."""
    prompt = request.messages[-1].content[0].text if request.reason == "user" else ""
    model_id = "big" if len(prompt) > 20 else "small"
    count = (request.state or {}).get("count", 0) + 1
    return Route(model=ctx.model_registry.find("local-echo", model_id), thinking_level="off",
                 state={"count": count})  # kept on the branch: request.state next time


class Router:
    @hookimpl
    def register_providers(self, ctx):
        return [EchoProvider()]

    @hookimpl
    def register_models(self, ctx):
        return [Model(id="small", provider="local-echo", api="echo"),
                Model(id="big", provider="local-echo", api="echo"),
                VirtualModel(provider="router", id="auto", name="Auto", route=by_length,
                             thinking_levels=["low", "high"])]


async def main() -> None:
    harness = await create_harness(Router(), model="router/auto:high", builtins=True)
    print("selected:", harness.model.key, harness.thinking_level, harness.thinking_levels())
    for prompt in ("hi", "please plan a larger change for me"):
        await harness.prompt(prompt)
        answer = harness.messages[-1]
        print(f"{prompt!r} -> {answer.provider}/{answer.model}: {answer.text}")
    for entry in harness.session.entries:
        if entry.type == "custom":
            print("router state:", entry.custom_type, entry.data)
    await harness.close()


if __name__ == "__main__":
    asyncio.run(main())
