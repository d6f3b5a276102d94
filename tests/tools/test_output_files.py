"""Output files (the full text of truncated output, binary MCP resources, codemode images
and text) are readable only by the user, as pi 1.6 makes them: output can carry private
data. Each is a new file named ``<prefix>-<16 hex><extension>`` in the temp folder.
The bash tool's is compared with pi 1.6's in ``test_pi16_side_by_side.py``."""

from __future__ import annotations

import base64
import os
import re
import stat
from pathlib import Path

from support.tool_helpers import call, text_of

from pi_plugins.codemode.output import script_result
from pi_plugins.mcp.results import resource_content, to_tool_result

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def private(path: str, prefix: str, extension: str) -> bool:
    """Only the user may read the file, named as pi names it (checked, then removed)."""
    try:
        assert re.fullmatch(rf"{prefix}-[0-9a-f]{{16}}{re.escape(extension)}", Path(path).name), path
        return stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        os.unlink(path)


def test_every_kind_of_output_file_is_readable_only_by_the_user(tmp_path):
    old = os.umask(0o022)  # what most users have: new files readable by all unless made private
    try:
        shown = script_result(ok=True, seconds=0, output=[("image", {"data": PNG, "mimeType": "image/png"})])
        image = re.search(r"\[Image saved to (\S+)", text_of(shown)).group(1)
        long_text = script_result(ok=True, seconds=0, output=[("text", "word " * 20_000)], max_output_tokens=10)
        full_text = re.search(r"\[Full output: (\S+)", text_of(long_text)).group(1)
        blob = resource_content({"uri": "file:///data.bin", "mimeType": "application/octet-stream",
                                 "blob": base64.b64encode(b"\x00secret").decode()})
        binary = re.search(r"saved to (\S+)\]", blob.text).group(1)
        big = to_tool_result("srv", "dump", {"content": [{"type": "text", "text": "x" * 100_000}]})
        mcp_text = big.details["fullOutputPath"]
        bash = call("bash", {"command": "seq 1 100000"}, tmp_path).details["fullOutputPath"]
    finally:
        os.umask(old)
    assert private(image, "pi-codemode", ".png")
    assert private(full_text, "pi-codemode", ".txt")
    assert private(binary, "pi-mcp", ".bin")
    assert private(mcp_text, "pi-mcp", ".txt")
    assert private(bash, "pi-bash", ".log")
