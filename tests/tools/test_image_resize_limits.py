"""models.json's ``inputLimits.images.resize`` (pi 1.6): an image the ``read`` tool
returns is fitted to the model's ``maxWidth`` / ``maxHeight`` before it is sent, in place
of the 2000x2000 default; side by side with pi 1.6 on the same scripted conversation."""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image
from support.cli import PiRunner, pi16
from support.llm_server import Reply

from pi_plugins.models.models_json import image_resize


def _sent_image_size(request) -> tuple[int, int]:
    """The size of the image the request carries (an OpenAI-compatible body)."""
    text = json.dumps(request.body)
    start = text.index("data:image/")
    data = text[start:text.index('"', start)].split(",", 1)[1]
    return Image.open(io.BytesIO(base64.b64decode(data))).size


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_read_images_are_fitted_to_the_models_resize_limits_as_pi16_fits_them(tmp_path, server):
    sizes = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        models = server.models_json("local", apiKey="test-key", models=[{
            "id": "test-model", "input": ["text", "image"],
            "inputLimits": {"images": {"resize": {"maxWidth": 120, "maxHeight": 90}}}}])
        (runner.agent_dir / "models.json").write_text(json.dumps(models))
        Image.new("RGB", (400, 200), (200, 30, 30)).save(runner.cwd / "wide.png")
        server.push(Reply(tool_calls=[("read", {"path": "wide.png"})]), Reply(text="A red picture."))
        before = len(server.requests)
        done = pi16(runner, "-p", "look at wide.png") if who == "pi16" else runner.run("-p", "look at wide.png")
        assert done.returncode == 0 and "A red picture." in done.stdout, (who, done.stderr)
        sizes[who] = _sent_image_size(server.requests[before + 1])
    assert sizes["ours"] == sizes["pi16"] == (120, 60)


def test_only_positive_whole_numbers_of_the_four_fields_are_taken():
    limits = {"images": {"resize": {"maxWidth": 800, "maxHeight": 0, "maxBytes": "big", "jpegQuality": 70,
                                    "other": 5}}}
    assert image_resize(limits) == {"maxWidth": 800, "jpegQuality": 70}
    assert image_resize({"images": {}}) is None and image_resize(None) is None


def _user_texts(request) -> list[str]:
    texts = []
    for message in request.body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            texts += [part.get("text", "") for part in content if part.get("type") == "text"]
    return texts


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_attached_images_are_fitted_to_the_models_resize_limits_as_pi16_fits_them(tmp_path, server):
    sent = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        models = server.models_json("local", apiKey="test-key", models=[{
            "id": "test-model", "input": ["text", "image"],
            "inputLimits": {"images": {"resize": {"maxWidth": 120, "maxHeight": 90}}}}])
        (runner.agent_dir / "models.json").write_text(json.dumps(models))
        Image.new("RGB", (400, 200), (200, 30, 30)).save(runner.cwd / "wide.png")
        server.push(Reply(text="A red picture."))
        before = len(server.requests)
        args = ("-p", "@wide.png", "what is this?")
        done = pi16(runner, *args) if who == "pi16" else runner.run(*args)
        assert done.returncode == 0 and "A red picture." in done.stdout, (who, done.stderr)
        texts = [t.replace(str(runner.cwd), "CWD") for t in _user_texts(server.requests[before])]
        sent[who] = (_sent_image_size(server.requests[before]), texts)
    assert sent["ours"] == sent["pi16"] and sent["ours"][0] == (120, 60)
    assert "[Image: original 400x200, displayed at 120x60." in sent["ours"][1][-1]


def _wide_png() -> str:
    out = io.BytesIO()
    Image.new("RGB", (400, 200), (200, 30, 30)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode("ascii")


def _run_with(server, tmp_path, tool_function, prompt: str, holder: dict | None = None):
    """The requests of a run in which the model calls ``snap`` (``tool_function``) once,
    on a model whose images fit 120x90; ``holder["harness"]`` is the harness."""
    import asyncio

    from pi_core import Tool, hookimpl
    from pi_plugins.sdk import create_harness

    class Snap:
        @hookimpl
        def register_tools(self):
            return [Tool(name="snap", description="A picture.", function=tool_function,
                         parameters={"type": "object", "properties": {}})]

    async def go():
        model = server.model("openai-completions", image_resize={"maxWidth": 120, "maxHeight": 90})
        harness = await create_harness(Snap(), model=model, cwd=str(tmp_path), builtins=True)
        holder["harness"] = harness
        server.push(Reply(tool_calls=[("snap", {})]), Reply(text="Seen."))
        before = len(server.requests)
        await harness.prompt(prompt)
        return server.requests[before:]

    holder = {} if holder is None else holder
    return asyncio.run(go())


def test_other_tools_result_images_are_fitted_to_the_models_limits_as_pi16(server, tmp_path):
    from pi_core.protocol.messages import ImageContent, TextContent
    from pi_core.protocol.tools import ToolResult

    def snap(args, run):
        return ToolResult(content=[TextContent("A snapshot."), ImageContent(data=_wide_png(), mime_type="image/png")])

    requests = _run_with(server, tmp_path, snap, "take one")
    assert _sent_image_size(requests[1]) == (120, 60)
    assert "[Image: original 400x200, displayed at 120x60." in json.dumps(requests[1].body)


def test_images_in_steering_messages_are_fitted_as_a_prompts_are_as_pi16(server, tmp_path):
    from pi_core.protocol.messages import ImageContent

    holder: dict = {}

    async def snap(args, run):
        await holder["harness"].queue("and this one", [ImageContent(data=_wide_png(), mime_type="image/png")],
                                      behavior="steer")
        return "queued a picture"

    requests = _run_with(server, tmp_path, snap, "go", holder)
    assert _sent_image_size(requests[1]) == (120, 60)
    assert ("and this one\\n\\n[Image: original 400x200, displayed at 120x60. Multiply coordinates by 3.33"
            in json.dumps(requests[1].body))
