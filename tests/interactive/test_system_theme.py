"""pi 1.6's ``system`` theme built from the terminal's colours (:mod:`.system_theme`):
the same colours as 1.6's own generator (run with node on the same input) in all three
tiers (background and palette, background only, nothing), and the OSC 4 replies read."""

import json
import re
import subprocess

import pytest

from pi_plugins.interactive.system_theme import generate
from pi_plugins.interactive.terminal_colors import parse_palette

XTERM = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
         (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255),
         (0, 255, 255), (255, 255, 255)]
MOCHA = [(69, 71, 90), (243, 139, 168), (166, 227, 161), (249, 226, 175), (137, 180, 250), (245, 194, 231),
         (148, 226, 213), (186, 194, 222), (88, 91, 112), (243, 139, 168), (166, 227, 161), (249, 226, 175),
         (137, 180, 250), (245, 194, 231), (148, 226, 213), (166, 173, 200)]
CASES = {
    "dark with a palette": ((30, 30, 46), (205, 214, 244), MOCHA),
    "light with a palette": ((250, 250, 250), (20, 20, 20), XTERM),
    "dark, background only": ((16, 16, 24), None, None),
    "mid grey (relaxed)": ((128, 128, 128), (0, 0, 0), XTERM),
    "nothing reported": (None, None, None),
}
_RUN = """const m = await import(process.argv[1]);
console.log(JSON.stringify(m.generateSystemThemeColors(JSON.parse(process.argv[2]))));"""


def _pi16(background, foreground, palette) -> dict:
    from support.programs import NODE22, require_real

    package = require_real("pi16")
    module = package / "dist" / "modes" / "interactive" / "theme" / "system-theme.js"
    rgb = lambda c: None if c is None else {"r": c[0], "g": c[1], "b": c[2]}  # noqa: E731
    given = {"background": rgb(background), "foreground": rgb(foreground),
             "palette": [rgb(c) for c in palette] if palette else None}
    out = subprocess.run([str(NODE22), "--input-type=module", "-e", _RUN, str(module), json.dumps(given)],
                         capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)


def _channels(color: str) -> list[int]:
    return [int(color[i:i + 2], 16) for i in (1, 3, 5)]


@pytest.mark.process  # runs pi 1.6's generator with node
@pytest.mark.parametrize("case", CASES)
def test_the_system_theme_has_pi_16s_colours(case):
    background, foreground, palette = CASES[case]
    theirs = _pi16(background, foreground, palette)
    ours, dim, _ = generate(background, foreground, palette)
    assert dim == theirs["dim"]
    assert set(ours) == set(theirs["colors"])
    for token, color in theirs["colors"].items():
        if isinstance(color, str) and color.startswith("#"):  # the same to one step a channel (float rounding)
            assert max(abs(a - b) for a, b in zip(_channels(ours[token]), _channels(color), strict=True)) <= 1, token
        else:  # an ANSI index or the terminal's default
            assert ours[token] == color, token


def test_a_palette_counts_only_when_all_16_colours_came():
    replies = b"".join(b"\x1b]4;%d;rgb:%02x%02x/0000/ffff\x1b\\" % (n, n, n) for n in range(16))
    palette = parse_palette(replies + b"\x1b[?1;2c")
    assert len(palette) == 16 and palette[3] == (3.0, 0.0, 255.0)
    assert parse_palette(replies.split(b"\x1b]4;15;")[0]) == []  # one missing: none


def test_the_palettes_hues_colour_the_theme():
    """Errors take the palette's red, links its blue: another red, another error colour."""
    base = generate((30, 30, 46), (205, 214, 244), MOCHA)[0]
    greener = list(MOCHA)
    greener[1] = (120, 200, 90)
    changed = generate((30, 30, 46), (205, 214, 244), greener)[0]
    assert changed["error"] != base["error"] and changed["mdLink"] == base["mdLink"]


def _heading_codes(argv: list[str], tmp_path, server) -> set[str]:
    """The SGR parameters right before an answer's heading, on a terminal that reports no
    colours (it answers only the device-attributes request) but claims truecolor."""
    import re
    import time

    from support.llm_server import Reply
    from support.pty_terminal import PtyTerminal

    home = tmp_path / argv[0].rsplit("/", 1)[-1]
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "COLORTERM": "truecolor", "LANG": "C.UTF-8", "PI_PROGRAM_STATUS": "0"}
    server.push(Reply(text="# Heading\n\nBody text."))
    with PtyTerminal([*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project") as term:
        term.wait_for("(auto)")
        term.type("hello")
        term.write(b"\r")
        term.wait_for("Heading")  # one word: the painter may skip blank cells inside a phrase
        time.sleep(1.0)
        written = term.text()
    before = re.search(r"((?:\x1b\[[\d;]*m)+)Heading", written)
    assert before, "the heading was drawn"
    return {code for sgr in re.findall(r"\x1b\[([\d;]*)m", before.group(1)) for code in [sgr]}


@pytest.mark.process
def test_with_no_background_reported_the_system_theme_uses_ansi_colours_as_pi_16(tmp_path, server):
    """1.6's third tier: nothing reported, so ANSI indices the terminal draws in its own
    theme (a heading in palette colour 3), never a colour of pi's own, even on truecolor."""
    import sys

    from support.programs import NODE22, require_real

    pi16 = _heading_codes([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")], tmp_path, server)
    ours = _heading_codes([sys.executable, "-m", "pi_plugins.cli"], tmp_path, server)
    yellow = lambda codes: any(re.search(r"(^|;)(33|38;5;3)(;|$)", code) for code in codes)  # noqa: E731
    pi_own = lambda codes: any(re.search(r"38;2;|38;5;(1[6-9]|[2-9]\d|\d{3})", code) for code in codes)  # noqa: E731
    assert yellow(pi16) and not pi_own(pi16), pi16
    assert yellow(ours) and not pi_own(ours), ours
