"""Images in the terminal: a read image's result drawn with iTerm2's or kitty's protocol
(what the chat writes to the terminal is logged by tmux's pipe-pane)."""

import base64

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


def _read_a_picture(pi_tui, server, tmp_path, env, settings=None):
    (tmp_path / "project" / "pic.png").write_bytes(PNG)
    server.push(Reply(tool_calls=[("read", {"path": "pic.png"})]), Reply(text="A picture."))
    term = pi_tui("--tui-mode", "regular", env=env, settings=settings)  # images go to the regular screen's scrollback
    log = tmp_path / "written.log"
    term._tmux("pipe-pane", "-t", "t", "-o", f"cat >> {log}")
    term.submit("look at pic.png")
    term.wait_for("A picture.")
    term.wait_idle()
    return log.read_bytes().decode("utf-8", "replace")


def test_iterm2_gets_an_inline_image(pi_tui, server, tmp_path):
    written = _read_a_picture(pi_tui, server, tmp_path, {"TERM_PROGRAM": "iTerm.app"})
    assert "\x1b]1337;File=inline=1;" in written and base64.b64encode(PNG).decode() in written


def test_kitty_gets_the_graphics_protocol(pi_tui, server, tmp_path):
    written = _read_a_picture(pi_tui, server, tmp_path, {"KITTY_WINDOW_ID": "1"})
    assert "\x1b_Ga=T,f=100," in written and base64.b64encode(PNG).decode() in written


def test_show_images_off_draws_none(pi_tui, server, tmp_path):
    written = _read_a_picture(pi_tui, server, tmp_path, {"KITTY_WINDOW_ID": "1"},
                              settings={"terminal": {"showImages": False}})
    assert "\x1b_G" not in written


def _fullscreen_placement(argv: list[str], tmp_path, server, picture: bytes) -> tuple:
    """Where and how a program places a read picture in the fullscreen transcript, on a
    pseudo-terminal that says it is kitty (tmux passes no images on)."""
    import json
    import re
    import time

    from support.pty_terminal import PtyTerminal

    home = tmp_path / argv[0].rsplit("/", 1)[-1]
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "project" / "pic.png").write_bytes(picture)
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json(
        "local", models=[{"id": "test-model", "input": ["text", "image"]}], apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1", "LANG": "C.UTF-8", "PI_PROGRAM_STATUS": "0"}
    server.push(Reply(tool_calls=[("read", {"path": "pic.png"})]), Reply(text="A picture."))
    with PtyTerminal([*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project") as term:
        term.wait_for("(auto)")
        time.sleep(0.5)  # the editor takes keys once the first frame is up
        term.type("look at pic.png")
        term.write(b"\r")
        term.wait_for("\x1b_Ga=T")  # placed once the read's result is in (the text may be drawn in parts)
        time.sleep(0.5)
        written = term.text()
    placed = re.search(r"\x1b\[(\d+);1H\x1b_Ga=T,f=100,q=2,C=1,c=(\d+),r=(\d+)[^;]*;([A-Za-z0-9+/=]+)", written)
    assert placed, "a placement with the cursor kept"
    deleted_first = written.rfind("\x1b_Ga=d,d=", 0, placed.start()) != -1
    return placed.groups(), deleted_first


def test_fullscreen_places_a_read_picture_as_pi_16_does(tmp_path, server):
    """pi 1.6 on kitty: the picture's rows are left blank in the transcript and the image is
    placed on them after the frame (cursor moved there, ``C=1``), its placements deleted first;
    the same row, size and data here."""
    import io
    import sys

    from PIL import Image

    from support.programs import NODE22, require_real

    buffer = io.BytesIO()
    Image.new("RGB", (40, 20), (200, 30, 30)).save(buffer, "PNG")
    picture = buffer.getvalue()
    ours = _fullscreen_placement([sys.executable, "-m", "pi_plugins.cli"], tmp_path, server, picture)
    pi16 = _fullscreen_placement([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")], tmp_path, server,
                                 picture)
    assert ours == pi16
    (row, columns, rows, data), deleted_first = ours
    assert (columns, rows) == ("60", "15") and base64.b64decode(data) == picture and deleted_first


def _kitty_run(argv: list[str], tmp_path, server, picture: bytes, answer: str, *, cell_pixels=None,
               quit_after=False) -> str:
    """Everything a program writes on a pseudo-terminal that says it is kitty (and answers
    the cell-size request with ``cell_pixels``) while it reads a picture and answers."""
    import json
    import time

    from support.pty_terminal import PtyTerminal

    home = tmp_path / f"{argv[0].rsplit('/', 1)[-1]}-{len(list(tmp_path.iterdir()))}"
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "project" / "pic.png").write_bytes(picture)
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json(
        "local", models=[{"id": "test-model", "input": ["text", "image"]}], apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1", "LANG": "C.UTF-8", "PI_PROGRAM_STATUS": "0"}
    server.push(Reply(tool_calls=[("read", {"path": "pic.png"})]), Reply(text=answer))
    with PtyTerminal([*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                     cell_pixels=cell_pixels) as term:
        term.wait_for("(auto)")
        time.sleep(0.5)
        term.type("look at pic.png")
        term.write(b"\r")
        term.wait_for(answer.split("\n")[-1])
        time.sleep(1.0)  # the last frame's placements
        if quit_after:
            term.type("/quit")
            term.write(b"\r")
            term.process.wait(20)
            time.sleep(0.2)
        return term.text()


def _placements(written: str) -> list[tuple[str, str]]:
    """(row, kitty controls) of each image placement, in order."""
    import re

    return re.findall(r"\x1b\[(\d+);1H\x1b_G([^;\x1b]*)[;\x1b]", written)


def _picture(width: int, height: int) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("paragraphs", [8, 14], ids=["scrolled-in-view", "partly-in-view"])
def test_fullscreen_images_have_kitty_ids_the_terminals_cell_size_and_crops_as_pi_16s(tmp_path, server,
                                                                                       paragraphs):
    """Side by side with pi 1.6 on kitty: both ask ``CSI 16 t`` and size the picture by the
    answer (10×25-pixel cells: 12 rows, not the 15 of 9×18; a loaded machine may draw a
    frame before the answer); the image has an id (``i=``),
    is placed again by it without its data (``a=p``) when the answer scrolls it up, and,
    partly scrolled out, is cropped to the rows in view (``y=``, ``h=``, ``r=``)."""
    import re
    import sys

    from support.programs import NODE22, require_real

    picture = _picture(40, 20)
    answer = "\n\n".join(f"line {i}" for i in range(paragraphs))
    runs = {name: _kitty_run(argv, tmp_path, server, picture, answer, cell_pixels=(10, 25)) for name, argv in (
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]),
        ("pi16", [str(NODE22), str(require_real("pi16") / "dist" / "cli.js")]))}
    last = {}
    for name, written in runs.items():
        assert "\x1b[16t" in written, name
        placed = _placements(written)
        ids = {re.search(r"i=(\d+)", controls).group(1) for _, controls in placed}
        assert len(ids) == 1 and 1 <= int(ids.pop()) <= 0xFFFFFFFF, name  # one image, one id
        assert re.match(r"a=T,f=100,q=2,C=1,c=60,.*i=\d", placed[0][1]), name  # uploaded once, with its id
        row, controls = placed[-1]
        last[name] = (row, re.sub(r"i=\d+", "i=ID", re.sub(r"^a=[Tp],(f=100,)?", "", controls)))
    assert last["ours"] == last["pi16"]
    if paragraphs == 14:
        assert last["ours"] == ("1", "q=2,C=1,c=60,i=ID,y=10,h=10,r=6")
    else:
        assert last["ours"] == ("7", "q=2,C=1,c=60,r=12,i=ID")
    again = _placements(runs["ours"])[1:]  # none when the answer came before the first frame with the image
    assert all(controls.startswith("a=p,") for _, controls in again)  # placed again by its id, no data


def test_the_exit_transcript_leaves_out_the_rows_kept_for_images(tmp_path, server):
    """The blank rows the view keeps under a picture for the image are not printed on exit."""
    import re
    import sys

    written = _kitty_run([sys.executable, "-m", "pi_plugins.cli"], tmp_path, server, _picture(40, 20),
                         "The last words.", quit_after=True)
    after = written[written.rindex("\x1b[?1049l"):]  # what is printed once the screen is left
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", after).replace("\r", "")
    transcript = plain[plain.index("pic.png"):plain.index("The last words.")]
    assert "\n" * 10 not in transcript  # 15 rows for the image (and its spacer) were left out
