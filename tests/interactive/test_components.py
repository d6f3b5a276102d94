"""pi-tui's component model in the chat: ctx.ui.custom (overlays too), footers, editors,
the working line, key listeners, autocomplete, themes and tools' own drawing (tmux)."""

import json
from pathlib import Path

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

QA_FORM = (Path(__file__).parents[2] / "docs" / "examples" / "qa_form.py").read_text()


def test_the_example_qa_plugin_asks_three_questions_in_an_overlay(pi_tui, server):
    server.push(Reply(text="Thanks, Arthur."))
    term = pi_tui(plugin=QA_FORM)
    term.submit("/qa")
    screen = term.wait_for("Question 1 of 3")
    assert "What is your name?" in screen
    lines = screen.rstrip().split("\n")
    [row] = [i for i, line in enumerate(lines) if "Question 1 of 3" in line]
    assert row < max(i for i, l in enumerate(lines) if set(l) == {"─"})  # over the chat, above the editor
    assert lines[row].index("Question") == 10 + 1  # centred, 80 columns wide (pi's default) in 100
    term.type("Arthur")
    term.wait_for("> Arthur")
    term.press("Enter")
    term.wait_for("What is your quest?")
    term.type("the grail")
    term.press("Enter")
    term.wait_for("What is your favourite colour?")
    term.type("blue")
    term.press("BSpace")  # the component takes every key
    term.type("e")
    term.press("Enter")
    screen = term.wait_for("Answers: Arthur | the grail | blue")
    assert "Question" not in screen
    term.wait_for("Thanks, Arthur.")
    sent = json.dumps(server.requests[0].body["messages"])
    assert "What is your quest? the grail" in sent and "What is your favourite colour? blue" in sent


def test_escape_cancels_the_overlay_and_the_editor_has_the_keys_again(pi_tui):
    term = pi_tui(plugin=QA_FORM)
    term.submit("/qa")
    term.wait_for("Question 1 of 3")
    term.press("Escape")
    term.wait_drawn("Warning: Q&A cancelled")
    term.type("typed into the editor")
    term.wait_drawn(lambda s: term.editor(s) == "typed into the editor")


TOOL_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.tools import ToolResult, tool


def draw_call(args, theme, context):
    context["state"]["city"] = args.get("city") or args.get("town")  # as the model sent them
    return [theme.fg("accent", "WEATHER CALL for " + str(context["state"]["city"]))]


def draw_result(result, options, theme, context):
    text = result.content[0].text if result.content else ""
    return ["WEATHER RESULT " + text.upper() + (" (expanded)" if options.expanded else ""),
            "drawn for " + str(context["state"].get("city"))]


@tool(description="The weather in a city", parameters={"type": "object", "properties": {
    "city": {"type": "string"}}, "required": ["city"]},
    render_call=draw_call, render_result=draw_result,
    prepare_arguments=lambda args: {"city": args["town"]} if "town" in args else args)
async def weather(args, run):
    return ToolResult.text("sunny in " + args["city"])


@hookimpl
def register_tools():
    return [weather]
'''


def test_a_tools_render_call_and_render_result_replace_the_default_drawing(pi_tui, server):
    server.push(Reply(tool_calls=[("weather", {"town": "Paris"})]), Reply(text="It is sunny."))
    term = pi_tui(plugin=TOOL_PLUGIN)
    term.submit("weather?")
    screen = term.wait_for("It is sunny.")
    assert "WEATHER CALL for Paris" in screen
    assert "WEATHER RESULT SUNNY IN PARIS" in screen and "drawn for Paris" in screen
    assert '"town"' not in screen and "weather {" not in screen  # not the default drawing
    # prepare_arguments turned the old shape into the current one before validation
    assert "sunny in Paris" in json.dumps(server.requests[1].body["messages"])
    term.press("C-o")
    term.wait_for("WEATHER RESULT SUNNY IN PARIS (expanded)")


UI_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command

seen = []


class Footer:
    def __init__(self, theme):
        self.theme = theme

    def render(self, width):
        return [self.theme.fg("dim", "CUSTOM FOOTER " + str(len(seen)) + " keys seen")]


class Banner:
    def render(self, width):
        return ["=" * width, "BANNER WIDGET", "=" * width]


async def decorate(args, ctx):
    ui = ctx.ui
    ui.set_footer(lambda tui, theme: Footer(theme))
    ui.set_widget("banner", lambda tui, theme: Banner())
    def listen(data):
        seen.append(data)
        if data == "%":
            return {"consume": True}
        if data == "~":
            return {"data": "TILDE"}
    ui.on_terminal_input(listen)
    ui.paste_to_editor("pasted ")
    ui.add_autocomplete_provider(lambda current: Hashes(current))
    ui.set_tools_expanded(True)
    themes = [t["name"] for t in ui.get_all_themes()]
    result = ui.set_theme("light")
    ui.notify("themes " + ",".join(themes) + " light:" + str(result["success"]) + " expanded:"
              + str(ui.get_tools_expanded()) + " styled:" + str("\\x1b[" in ui.theme.fg("accent", "x")))


class Hashes:
    def __init__(self, current):
        self.current = current

    def get_suggestions(self, lines, line, col):
        before = lines[line][:col]
        word = before.split(" ")[-1]
        if word.startswith("#"):
            return {"prefix": word, "items": [{"value": "#2983", "label": "#2983", "description": "autocomplete API"}]}
        return self.current.get_suggestions(lines, line, col)


async def slow(args, ctx):
    ctx.ui.set_working_message("Pondering deeply...")
    ctx.ui.set_working_indicator({"frames": ["@"], "interval_ms": 200})
    ctx.ui.set_hidden_thinking_label("[thoughts hidden]")
    ctx.send_user_message("think", trigger_turn=True)


async def hidden(args, ctx):
    ctx.ui.set_working_visible(False)
    ctx.send_user_message("quietly", trigger_turn=True)


@hookimpl
def register_commands():
    return [Command("decorate", "Decorate the chat", decorate), Command("hidden", "No working line", hidden),
            Command("slow", "Start a slow run", slow),
            Command("greet", "Greet someone", lambda args, ctx: ctx.ui.notify("hello " + args),
                    argument_completions=lambda prefix: [n for n in ["alice", "albert", "bob"]
                                                         if n.startswith(prefix)])]
'''


def test_footer_widget_key_listener_paste_autocomplete_theme_and_tools_expanded(pi_tui, tmp_path):
    term = pi_tui(plugin=UI_PLUGIN)
    term.submit("/decorate")
    screen = term.wait_for(lambda s: "themes " in s and "BANNER WIDGET" in s and "CUSTOM FOOTER" in s)
    assert "themes system,dark,light light:True expanded:True styled:True" in screen
    assert "BANNER WIDGET" in screen and "CUSTOM FOOTER" in screen and "(auto)" not in screen
    assert json.loads((term.agent_dir / "settings.json").read_text()).get("theme") is None  # not saved
    term.wait_for(lambda s: term.editor(s) == "pasted")
    term.type("a%b~")  # % is consumed by the listener, ~ becomes TILDE
    term.wait_for(lambda s: term.editor(s) == "pasted abTILDE")
    term.type(" #29")
    term.wait_for("autocomplete API")
    term.press("C-c")
    term.wait_for(lambda s: "CUSTOM FOOTER" in s and term.editor(s) == "")


def test_command_argument_completions(pi_tui):
    term = pi_tui(plugin=UI_PLUGIN)
    term.type("/greet al")
    screen = term.wait_for("albert")
    assert "alice" in screen and "bob" not in screen


def test_working_message_indicator_and_hidden_thinking_label(pi_tui, server):
    server.push(Reply(thinking="secret reasoning", text="Done thinking.", delay=0.3, delta_size=2))
    term = pi_tui(plugin=UI_PLUGIN, settings={"hideThinkingBlock": True})
    term.submit("/slow")
    term.wait_for("@ Pondering deeply...")
    screen = term.wait_for("Done thinking.")
    assert "[thoughts hidden]" in screen and "secret reasoning" not in screen


SHUTDOWN_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command


@hookimpl
def register_commands():
    return [Command("bye", "Leave", lambda args, ctx: ctx.shutdown())]
'''


def test_ctx_shutdown_leaves_the_chat_as_quit_does(pi_tui):
    term = pi_tui(plugin=SHUTDOWN_PLUGIN)
    term.submit("/bye")
    status, _ = term.wait_for_exit()
    assert status == 0


STACK_PLUGIN = '''
import asyncio

from pi_core import hookimpl
from pi_core.protocol.commands import Command


class Box:
    def __init__(self, name, tui, keys, done):
        self.name, self.tui, self.keys, self.done, self.got = name, tui, keys, done, ""

    def render(self, width):
        return ["[" + self.name + "] got:" + self.got]

    def handle_input(self, data):
        if self.keys.matches(data, "tui.select.confirm"):
            self.done(self.name + ":" + self.got)
        else:
            self.got += data
        self.tui.request_render()


async def stack(args, ctx):
    first = asyncio.ensure_future(ctx.ui.custom(lambda t, th, k, d: Box("lower", t, k, d), overlay=True,
                                                overlay_options={"anchor": "top-left", "width": 30}))
    await asyncio.sleep(0.2)
    upper = await ctx.ui.custom(lambda t, th, k, d: Box("upper", t, k, d), overlay=True)
    ctx.ui.notify("closed " + upper)
    ctx.ui.notify("closed " + await first)


class Header:
    def render(self, width):
        return ["MY OWN HEADER"]


class Editor:
    def __init__(self, tui, keys):
        self.tui, self.keys, self.text = tui, keys, ""

    def render(self, width):
        return ["vim> " + self.text]

    def handle_input(self, data):
        if self.keys.matches(data, "tui.input.submit"):
            self.tui.submit(self.text)
            self.text = ""
        else:
            self.text += data
        self.tui.request_render()


async def look(args, ctx):
    ctx.ui.set_header(lambda tui, theme: Header())
    ctx.ui.set_editor_component(lambda tui, theme, keys: Editor(tui, keys))


async def plain(args, ctx):
    ctx.ui.set_editor_component(None)


@hookimpl
def register_commands():
    return [Command("stack", "Two overlays", stack), Command("look", "Own header and editor", look),
            Command("plain", "Our editor again", plain)]
'''


def test_overlays_stack_and_the_newest_takes_the_keys(pi_tui):
    term = pi_tui(plugin=STACK_PLUGIN)
    term.submit("/stack")
    screen = term.wait_for("[upper] got:")
    assert "[lower] got:" in screen
    assert screen.index("[lower]") < screen.index("[upper]")  # the newest drawn over (after) the older
    term.type("ab")
    term.wait_for("[upper] got:ab")
    assert "[lower] got:\n" in term.screen() or term.screen().count("got:ab") == 1
    term.press("Enter")
    term.wait_for("closed upper:ab")
    term.type("cd")  # the keys go to the overlay left
    term.wait_for("[lower] got:cd")
    term.press("Enter")
    term.wait_drawn("closed lower:cd")


def test_a_plugin_replaces_the_header_and_the_editor(pi_tui, server):
    server.push(Reply(text="Typed in the plugin's editor."))
    term = pi_tui(plugin=STACK_PLUGIN)
    term.submit("/look")
    screen = term.wait_for("vim>")
    assert "MY OWN HEADER" in screen and "pi-harness v" not in screen
    term.type("hello")
    term.wait_for("vim> hello")
    term.press("Enter")
    term.wait_for("Typed in the plugin's editor.")
    assert server.requests[0].body["messages"][-1]["content"] in ("hello", [{"type": "text", "text": "hello"}])
    term.wait_idle()
    term.type("/plain")
    term.wait_for("vim> /plain")
    term.press("Enter")
    term.wait_drawn(lambda s: "vim>" not in s)


def test_set_working_visible_false_hides_the_working_line(pi_tui, server):
    server.push(Reply(text="Quiet answer, streamed slowly.", delay=0.1, delta_size=2))
    term = pi_tui(plugin=UI_PLUGIN)
    term.submit("/hidden")
    term.wait_for("Quiet")  # streaming
    seen: list[str] = []
    term.wait_for(lambda s: seen.append(s) or "slowly." in s)  # every screen until the end
    assert seen and not any("Working..." in s for s in seen)


ASYNC_COMPLETION_PLUGIN = '''
import asyncio

from pi_core import hookimpl
from pi_core.protocol.commands import Command


class SlowVariables:
    """Asks a slow source (three seconds) for the $ words; the rest from the built-in provider."""

    def __init__(self, current):
        self.current = current

    async def get_suggestions(self, lines, line, col, options):  # pi's shape, options {"force": ...}
        word = lines[line][:col].split(" ")[-1]
        if not word.startswith("$"):
            return self.current.get_suggestions(lines, line, col, options)
        await asyncio.sleep(3.0)
        names = ["$PROJECT_ROOT", "$PYTHONPATH", "$HOME"]
        return {"prefix": word, "items": [{"value": n, "description": "from the slow source"}
                                          for n in names if n.startswith(word)]}


async def variables(args, ctx):
    ctx.ui.add_autocomplete_provider(lambda current: SlowVariables(current))
    ctx.ui.notify("variables ready", "info")


@hookimpl
def register_commands():
    return [Command("variables", "Complete $ words slowly", variables)]
'''


def test_a_slow_async_autocomplete_provider_leaves_the_editor_free_and_its_suggestions_appear(pi_tui):
    import time

    term = pi_tui(plugin=ASYNC_COMPLETION_PLUGIN)
    term.submit("/variables")
    term.wait_drawn("variables ready")
    started = time.monotonic()
    term.type("$P")
    term.type("Y")  # typed while the provider still waits: the editor takes it at once
    screen = term.wait_for(lambda s: term.editor(s) == "$PY")
    assert time.monotonic() - started < 2.5 and "from the slow source" not in screen
    screen = term.wait_for("from the slow source", timeout=15)
    assert "$PYTHONPATH" in screen and "$PROJECT_ROOT" not in screen  # the answer for what is typed now
    term.press("Tab")
    term.wait_for(lambda s: term.editor(s) == "$PYTHONPATH")
    term.press("C-c")
    term.type("/vari")  # the built-in provider's answer, through the async one
    term.wait_for("Complete $ words slowly")


PLACEMENT_PLUGIN = '''
import asyncio

from pi_core import hookimpl
from pi_core.protocol.commands import Command

handles = {}


class Box:
    """A frame as wide as it is drawn, so the screen shows its width."""

    def __init__(self, name, rows, keys=None, done=None):
        self.name, self.rows, self.keys, self.done = name, rows, keys, done

    def render(self, width):
        body = ["|" + (self.name + " " + str(n)).ljust(width - 2)[:width - 2] + "|" for n in range(self.rows)]
        return ["+" + "-" * (width - 2) + "+", *body, "+" + "-" * (width - 2) + "+"]

    def handle_input(self, data):
        if data == "h":
            handles["corner"].set_hidden(not handles["corner"].is_hidden())
        elif data == "f":
            handles["low"].focus()
        elif data == "u":
            handles["middle"].unfocus()
        elif self.keys.matches(data, "tui.select.confirm"):
            self.done("keys reached " + self.name)


def keep(name):
    return lambda handle: handles.__setitem__(name, handle)


async def place(args, ctx):
    ui = ctx.ui
    shown = [
        ui.custom(lambda t, th, k, d: Box("corner", 1), overlay=True, on_handle=keep("corner"),
                  overlay_options={"anchor": "top-right", "width": 20, "margin": {"top": 2}, "non_capturing": True}),
        ui.custom(lambda t, th, k, d: Box("low", 1, k, d), overlay=True, on_handle=keep("low"),
                  overlay_options={"anchor": "bottom-left", "width": "30%", "margin": 1, "non_capturing": True}),
        ui.custom(lambda t, th, k, d: Box("moved", 1), overlay=True, on_handle=keep("moved"),
                  overlay_options={"row": 10, "col": 50, "offset_x": -5, "offset_y": 2, "width": 20,
                                   "non_capturing": True}),
        ui.custom(lambda t, th, k, d: Box("wide only", 1), overlay=True, on_handle=keep("wide"),
                  overlay_options={"visible": lambda columns, rows: columns >= 120}),
        ui.custom(lambda t, th, k, d: Box("middle", 5, k, d), overlay=True, on_handle=keep("middle"),
                  overlay_options=lambda: {"width": 40, "max_height": 4}),
    ]
    tasks = [asyncio.ensure_future(s) for s in shown]
    tasks[1].add_done_callback(lambda task: ctx.ui.notify("low closed: " + str(task.result()), "info"))
    answer = await tasks[-1]
    for name in ("corner", "low", "moved", "wide"):
        handles[name].hide()
    ctx.ui.notify(answer + "; others hidden", "info")


async def bad(args, ctx):
    try:
        await ctx.ui.custom(lambda t, th, k, d: Box("x", 1), overlay=True, overlay_options={"anchor": "middle"})
    except ValueError as exc:
        ctx.ui.notify("refused: " + str(exc), "info")


async def peek(args, ctx):
    await ctx.ui.custom(lambda t, th, k, d: Box("peek", 1), overlay=True,
                        overlay_options={"anchor": "top-center", "width": 30, "non_capturing": True})


async def front(args, ctx):
    handles["middle"].focus()
    ctx.ui.notify("middle focused: " + str(handles["middle"].is_focused()), "info")


@hookimpl
def register_commands():
    return [Command("place", "Placed overlays", place), Command("bad", "A bad anchor", bad),
            Command("front", "Focus the middle overlay", front), Command("peek", "A panel that leaves the keys", peek)]
'''


def _frame_at(lines, row, col, width):
    return lines[row][col:col + width] == "+" + "-" * (width - 2) + "+"


def test_overlay_options_place_and_size_overlays_where_pi_tui_would(pi_tui, server):
    server.push(Reply(text="An answer behind the overlays."))
    term = pi_tui(plugin=PLACEMENT_PLUGIN)  # 100 × 40
    term.submit("hello")  # some chat behind the overlays
    term.wait_for("An answer behind the overlays.")
    term.wait_idle()
    term.submit("/place")

    def placed(screen):
        lines = screen.split("\n") + [""] * 40
        return (_frame_at(lines, 2, 80, 20) and "|corner 0" in lines[3][80:]  # top-right, 2 rows of margin
                and _frame_at(lines, 36, 1, 30) and "|low 0" in lines[37][1:]  # bottom-left, 30%, margin 1
                and _frame_at(lines, 38, 1, 30)
                and _frame_at(lines, 12, 45, 20)  # row 10, col 50, moved by (-5, +2)
                # centred, 40 wide, cut to 4 rows: rows 18..21, columns 30..69
                and _frame_at(lines, 18, 30, 40) and "|middle 2" in lines[21][30:])

    screen = term.wait_for(placed)
    assert "middle 3" not in screen
    assert "wide only" not in screen  # visible() says no in 100 columns
    assert screen.count("An answer behind the overlays.") == 1  # the chat stays behind them
    # ... and is not in the scrollback too, once the chat is reprinted for the overlays
    term.wait_for(lambda h: h.count("An answer behind the overlays.") == 1 and "middle 0" in h, history=True)
    term.type("h")  # the capturing overlay has the keys: it hides the corner through its handle
    term.wait_for(lambda s: "corner 0" not in s and "middle 0" in s)
    term.type("h")
    term.wait_for("corner 0")
    term.press("Enter")
    screen = term.wait_drawn("keys reached middle; others hidden")
    assert not any(name in screen for name in ("corner 0", "low 0", "moved 0", "middle 0"))
    assert "An answer behind the overlays." in screen and "+--" not in screen  # the chat as it was
    term.wait_for(lambda h: h.count("pi-harness v") == 1 and h.count("An answer behind the overlays.") == 1
                  and "others hidden" in h, history=True)


def test_bad_overlay_options_are_refused_with_the_reason(pi_tui):
    term = pi_tui(plugin=PLACEMENT_PLUGIN)
    term.submit("/bad")
    screen = term.wait_drawn("refused: overlay_options: anchor 'middle' is not one of center, top-left")
    assert "+--" not in screen


def test_an_overlays_handle_moves_the_keys_between_overlays_and_the_editor(pi_tui):
    term = pi_tui(plugin=PLACEMENT_PLUGIN)
    term.submit("/place")
    term.wait_for(lambda s: "middle 2" in s and "low 0" in s)
    term.type("f")  # the middle overlay focuses the low one: it has the keys now
    term.press("Enter")
    screen = term.wait_for("low closed: keys reached low")
    assert "low 0" not in screen and "middle 0" in screen
    term.type("u")  # the keys went back to the middle one; it gives them up: the editor has them
    term.type("/front")
    term.wait_for(lambda s: "/front" in s and "middle 0" in s)
    term.press("Enter")  # typed into the editor while the overlays show
    term.wait_for("middle focused: True")
    term.press("Enter")
    term.wait_drawn("keys reached middle; others hidden")


def test_quitting_while_an_overlay_shows_leaves_the_whole_chat_in_the_terminal(pi_tui, server):
    server.push(Reply(text="The last answer before quitting."))
    term = pi_tui(plugin=PLACEMENT_PLUGIN)
    term.submit("hello")
    term.wait_for("The last answer before quitting.")
    term.wait_idle()
    term.submit("/peek")  # it does not take the keys: the editor still has them
    term.wait_for("peek 0")
    term.submit("/quit")
    screen = term.wait_for("[[exited 0]]")
    history = term.screen(history=True)
    assert "peek 0" not in screen and history.count("The last answer before quitting.") == 1
    assert history.index("pi-harness v") < history.index("hello") < history.index("The last answer")


def test_a_conversation_behind_an_overlay_reaches_the_scrollback_in_order(pi_tui, server):
    server.push(Reply(text="The first answer."))
    server.push(Reply(text=" ".join(f"word{i}" for i in range(400)), delay=0.01, delta_size=20))
    term = pi_tui("--tui-mode", "regular", plugin=PLACEMENT_PLUGIN)  # the regular screen's scrollback
    term.submit("hello")
    term.wait_for("The first answer.")
    term.wait_idle()
    term.submit("/peek")  # a panel over the chat that leaves the keys to the editor
    term.wait_for("peek 0")
    term.submit("stream please")
    screen = term.wait_for(lambda s: "word399" in s and "peek 0" in s, timeout=30)
    lines = screen.split("\n")
    assert lines[1][35:65] == "|peek 0".ljust(29) + "|"  # still top-centre, 30 wide, over the answer
    order = ["pi-harness v", "hello", "The first answer.", "stream please", "word0 ", "word399"]

    def in_order_once(history):  # once the finished answer is printed (the chat is reprinted for it)
        return ([history.count(text) for text in order] == [1] * len(order)
                and [history.index(text) for text in order] == sorted(history.index(text) for text in order))

    history = term.wait_for(in_order_once, history=True)
    assert "peek 0" in "\n".join(history.split("\n")[-42:])  # the panel still shows on the screen
