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
