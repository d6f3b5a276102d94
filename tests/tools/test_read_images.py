"""read's images as pi's ``images.autoResize`` sends them: at most 2000x2000 and under
4.5 MB of base64, with a note that maps the coordinates back; unchanged when they fit,
and always unchanged with the setting off."""

import asyncio
import base64
import io
import os
import subprocess
import sys

import pytest
from PIL import Image

from pi_core.app.settings import Settings
from pi_core.context import Context
from pi_core.plugins import Plugins
from pi_core.protocol.messages import ImageContent
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.tools import ToolRun
from pi_plugins.tools.read import read_tool
from support.tool_helpers import text_of


def picture(path, width, height, kind="PNG", noise=False):
    image = Image.effect_noise((width, height), 80).convert("RGB") if noise else \
        Image.linear_gradient("L").resize((width, height)).convert("RGB")
    image.save(path, kind)
    return path.read_bytes()


def read(ws, name, settings=None):
    ctx = Context(cwd=str(ws), plugins=Plugins(), settings=Settings(settings or {}))
    result = asyncio.run(read_tool.execute({"path": name}, ToolRun("c", AbortSignal(), ctx)))
    images = [c for c in result.content if isinstance(c, ImageContent)]
    return text_of(result), images


def size_of(image: ImageContent):
    return Image.open(io.BytesIO(base64.b64decode(image.data))).size


def test_a_large_image_is_scaled_to_2000_with_the_coordinate_note(ws):
    picture(ws / "wide.png", 4000, 3000)
    text, [image] = read(ws, "wide.png")
    assert size_of(image) == (2000, 1500)
    assert "[Image: original 4000x3000, displayed at 2000x1500. Multiply coordinates by 2.00 to map to original image.]" in text
    assert len(image.data) < 4.5 * 1024 * 1024


def test_a_tall_image_is_scaled_by_its_height(ws):
    picture(ws / "tall.jpg", 800, 3200, "JPEG")
    _, [image] = read(ws, "tall.jpg")
    assert size_of(image) == (500, 2000)


def test_an_image_over_the_size_limit_is_made_smaller_until_it_fits(ws):
    data = picture(ws / "noise.png", 2000, 2000, noise=True)  # random pixels: ~12 MB as PNG
    assert len(base64.b64encode(data)) > 4.5 * 1024 * 1024
    text, [image] = read(ws, "noise.png")
    assert image.mime_type == "image/jpeg" and len(image.data) < 4.5 * 1024 * 1024
    assert "original 2000x2000" in text


def test_an_image_that_fits_is_sent_as_it_is(ws):
    data = picture(ws / "small.png", 1200, 900)
    text, [image] = read(ws, "small.png")
    assert base64.b64decode(image.data) == data and "Multiply" not in text


def test_auto_resize_off_sends_the_original(ws):
    data = picture(ws / "wide.png", 4000, 3000)
    text, [image] = read(ws, "wide.png", {"images": {"autoResize": False}})
    assert base64.b64decode(image.data) == data and size_of(image) == (4000, 3000)
    assert "Multiply" not in text


@pytest.mark.process
def test_pi_help_does_not_import_pillow(tmp_path):
    probe = ("import sys; sys.argv = ['pi', '--help']; from pi_plugins.cli.entry import main; "
             "code = main(); print('PIL' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert done.stderr.strip().splitlines()[-1] == "False"
