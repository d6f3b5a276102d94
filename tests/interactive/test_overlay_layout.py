"""Overlay placement is pi-tui's: the same options give the same width, row, column and
height limit as pi-tui's own ``resolveOverlayLayout`` (run in node, pi 0.73.1's)."""

import json
import subprocess

import pytest
from support.programs import node_for, require_real

from pi_plugins.interactive.overlays import parse_options, resolve_layout

pytestmark = pytest.mark.process  # runs node

CASES = [
    ({}, 5, 100, 40),
    ({}, 5, 60, 20),
    ({"width": "50%", "minWidth": 40, "maxHeight": "80%", "anchor": "right-center", "offsetX": -2}, 30, 100, 40),
    ({"anchor": "top-left", "margin": 2}, 3, 100, 40),
    ({"anchor": "bottom-right", "margin": {"bottom": 3, "right": 4}, "width": 30}, 6, 120, 30),
    ({"anchor": "bottom-center", "maxHeight": 4}, 10, 100, 40),
    ({"anchor": "left-center", "width": 10}, 7, 50, 15),
    ({"row": "25%", "col": 10}, 5, 100, 40),
    ({"row": "100%", "col": "100%", "width": 20}, 5, 100, 40),
    ({"row": 38, "col": 95, "width": 20}, 5, 100, 40),  # clamped into the terminal
    ({"row": 10, "col": 50, "offsetX": -5, "offsetY": 2, "width": 20}, 3, 100, 40),
    ({"width": 200, "minWidth": 10}, 3, 80, 24),
    ({"anchor": "top-center", "width": "33.5%", "margin": {"top": 1, "left": 3}}, 2, 90, 30),
]


def test_the_layout_is_pi_tuis():
    package = require_real("pi")
    tui = package.parent / "pi-tui" / "dist" / "tui.js"
    script = f"""
import {{ TUI }} from {json.dumps(tui.as_uri())};
const cases = {json.dumps(CASES)};
const host = {{ resolveAnchorRow: TUI.prototype.resolveAnchorRow, resolveAnchorCol: TUI.prototype.resolveAnchorCol }};
console.log(JSON.stringify(cases.map(([o, h, w, r]) => TUI.prototype.resolveOverlayLayout.call(host, o, h, w, r))));
"""
    done = subprocess.run([node_for("pi"), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for (options, height, columns, rows), want in zip(CASES, theirs):
        got = resolve_layout(parse_options(options), height, columns, rows)
        want = {"width": want["width"], "row": want["row"], "col": want["col"], "maxHeight": want.get("maxHeight")}
        assert {"width": got.width, "row": got.row, "col": got.col, "maxHeight": got.max_height} == want, options
