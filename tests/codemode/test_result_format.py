"""The codemode result as pi 1.6 words it (docs/codemode.md, and pi 1.6 run against the
scripted server where the docs are silent), the ``// @options:`` line, output limits,
and how ``codemode.mode`` and ``codemode.inlineBudget`` present the tools."""

from __future__ import annotations

import asyncio
import base64
import math
import re
from pathlib import Path

import pytest
from support.codemode_scripts import echo, output_of, results

import pi_plugins.codemode as codemode
from pi_core.app.builtins import BUILTINS
from pi_core.testing.harness import HarnessMaker
from pi_core.testing.scripted import Reply
from pi_plugins.codemode.options import OptionsError, parse_options
from pi_plugins.codemode.output import script_result

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def text_of(result) -> str:
    return result.content[0].text


def test_a_script_with_no_output_says_so_in_three_lines():
    assert text_of(script_result(ok=True, seconds=0.24, output=[])) == \
        "Script completed\nWall time 0.2 seconds\nOutput:\n"


def test_several_texts_are_numbered_and_console_lines_come_last_in_one_block():
    output = [("text", "a\n"), ("console", "c1"), ("text", "b"), ("console", "")]
    assert text_of(script_result(ok=True, seconds=1.0, output=output)) == (
        "Script completed\nWall time 1.0 seconds\nOutput:\n\n==> text 1/2 <==\na\n==> text 2/2 <==\nb\n"
        "<console_output>\nc1\n\n</console_output>")


def test_a_failure_keeps_the_partial_output_then_the_error_and_the_calls_made():
    result = script_result(ok=False, seconds=0.1, output=[("text", "before")], error="Error: boom",
                           calls=[("read", "ok"), ("bash", "error")])
    assert result.is_error
    assert text_of(result) == (
        "Script failed\nWall time 0.1 seconds\nOutput:\n\nbefore\nScript error:\nError: boom\n\n"
        "Tool calls made before the failure (they are not undone): read (ok), bash (error)")
    assert text_of(script_result(ok=False, seconds=0, output=[], error="Error: x")).endswith(
        "Output:\n\nScript error:\nError: x\n\nNo tool calls were made.")


def test_output_over_max_output_tokens_keeps_its_ends_and_saves_the_whole_to_a_file():
    output = [("text", f"line {i} " + "x" * 20) for i in range(50)]
    text = text_of(script_result(ok=True, seconds=0.2, output=output, max_output_tokens=20))
    whole = "\n".join(f"==> text {i + 1}/50 <==\nline {i} " + "x" * 20 for i in range(50))
    tokens = math.ceil(len(whole) / 4)
    assert text.startswith(f"Script completed\nWall time 0.2 seconds\nOutput:\n\nWarning: truncated output "
                           f"(original token count: {tokens})\nTotal output lines: 100\n\n==> text 1/50 <==\n")
    assert f"…{tokens - 20} tokens truncated…" in text
    path = re.search(r"\[Full output: (\S+pi-codemode-[0-9a-f]{16}\.txt) \(read with offset/limit\)\]$", text)
    assert path is not None and Path(path.group(1)).read_text() == whole


def test_an_image_is_saved_named_and_passed_on_in_order():
    result = script_result(ok=True, seconds=0, output=[("image", {"data": PNG, "mimeType": "image/png"}),
                                                      ("text", "after")])
    saved = re.search(r"\[Image saved to (\S+\.png) \(image/png, 70B\)\]\nafter$", text_of(result))
    assert saved is not None and Path(saved.group(1)).read_bytes() == base64.b64decode(PNG)
    assert result.content[1].mime_type == "image/png"


@pytest.mark.parametrize(("code", "error"), [
    ('const a = 1;\n// @options: {"timeout_ms": 5}', "The // @options: line must be the first line of the input; "
                                                     "found one on line 2"),
    ('// @options: {"bogus": 1}', "@options only supports `max_output_tokens` and `timeout_ms`; got `bogus`"),
    ("// @options: not json", "@options must be valid JSON with supported fields `max_output_tokens` and "
                              "`timeout_ms`: "),
    ('// @options: {"timeout_ms": -1}', "@options field `timeout_ms` must be a positive integer up to 2147483647"),
])
def test_a_bad_options_line_fails_the_call_before_the_script_runs(code, error):
    with pytest.raises(OptionsError) as raised:
        parse_options(code)
    assert str(raised.value).startswith(error)


def test_the_options_line_sets_both_limits():
    options = parse_options('// @options: {"max_output_tokens": 2000, "timeout_ms": 60000}\nreturn 1')
    assert (options.max_output_tokens, options.timeout_ms) == (2000, 60000)
    assert parse_options("return 1").timeout_ms is None


def test_codemode_is_a_built_in_that_can_be_dropped():
    assert BUILTINS["codemode"] == "pi_plugins.codemode"


def requests_with(tmp_path, settings: dict | None):
    async def scenario():
        make = HarnessMaker(tmp_path)
        from pi_core import Settings

        harness = await make(codemode, script=[Reply(text="hi")], tools=[echo, codemode.TOOL],
                             **({"settings": Settings(settings)} if settings else {}))
        harness.agent.set_active_tools(["echo", "codemode"])
        await harness.prompt("go")
        return make.provider.requests[0].tools

    return {t.name: t for t in asyncio.run(scenario())}


def test_mode_on_keeps_the_tools_declared_with_a_note_on_scripts(tmp_path):
    tools = requests_with(tmp_path, None)
    assert list(tools) == ["echo", "codemode"]
    assert tools["echo"].description == "Say the word back.\n\nCodemode: in a script, `tools.echo(args)` " \
                                        "resolves to a string."
    assert tools["codemode"].parameters == {"type": "object", "required": ["code"], "properties": {
        "code": {"type": "string", "description": "Raw JavaScript source."}}}


def test_mode_only_hides_the_tools_and_lists_them_in_codemodes_description(tmp_path):
    tools = requests_with(tmp_path, {"codemode": {"mode": "only"}})
    assert list(tools) == ["codemode"]
    assert "declare const tools: { echo(args: {\n  word: string;\n}): Promise<string>; };" in \
        tools["codemode"].description


def test_an_inline_budget_of_zero_lists_no_declarations(tmp_path):
    tools = requests_with(tmp_path, {"codemode": {"mode": "only", "inlineBudget": 0}})
    assert "declare const tools" not in tools["codemode"].description
    assert "1 more tool not listed here" in tools["codemode"].description


@pytest.mark.process
def test_a_script_result_in_the_conversation_has_pis_shape(tmp_path):
    (text,) = results(tmp_path, "text('first'); console.log('log', 1, {x: 2}, null, undefined); console.warn('w');\n"
                                "return [await tools.echo({word: 'a'}), await tools.echo({word: 'b'})]")
    assert re.fullmatch(r"Script completed\nWall time \d+\.\d seconds\n[\s\S]*", text)
    assert output_of(text) == ('Output:\n\n==> text 1/2 <==\nfirst\n==> text 2/2 <==\n["echo a","echo b"]\n'
                               '<console_output>\nlog 1 {"x":2} null undefined\nw\n</console_output>')


@pytest.mark.process
def test_options_errors_and_exit_reach_the_model_as_pi_words_them(tmp_path):
    misplaced, exited, thrown = results(tmp_path, 'return 1\n// @options: {"timeout_ms": 5}',
                                        "text('x'); exit(); text('y')", "throw 'plain string'")
    assert misplaced == "The // @options: line must be the first line of the input; found one on line 2"
    assert output_of(exited) == "Output:\n\nx"
    assert output_of(thrown) == "Output:\n\nScript error:\nError: plain string\n\nNo tool calls were made."
