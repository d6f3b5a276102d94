"""Codemode's script under a grammar (``supportsOpenAIGrammarTools``): a model that takes
grammar tools gets ``codemode`` as a custom tool whose input is the script as raw text,
as pi 1.6 sends it, and the script it writes runs as a JSON-wrapped one does. The grammar
is our own words for the script's shape (an optional options line, then the code)."""

from __future__ import annotations

import json
from pathlib import Path

import lark
import pytest
from support.codemode_scripts import print_run_side_by_side
from support.llm_server import Reply

from pi_plugins.codemode.declarations import GRAMMAR
from tests.codemode.test_with_pi16 import without_wall_time

SCRIPT = '// @options: {"timeout_ms": 5000}\nconst a = await tools.read({path: "a.txt"});\nreturn a.trim() + "!"'


def test_the_script_grammar_takes_any_script_with_or_without_its_options_line():
    parser = lark.Lark(GRAMMAR, parser="earley")
    with_options = parser.parse(SCRIPT)
    assert [t.data for t in with_options.children] == ["options", "code"]
    assert str(with_options.children[1].children[0]).startswith("const a")
    assert [t.data for t in parser.parse("return 1").children] == ["code"]
    assert [t.data for t in parser.parse("  //@options: {}\r\nx\n").children] == ["options", "code"]
    with pytest.raises(lark.exceptions.LarkError):
        parser.parse("")  # a script is never empty


def _custom_call(code: str) -> str:
    def chunk(delta: dict, finish: str | None = None) -> str:
        return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    return (chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "custom",
                                                        "custom": {"name": "codemode", "input": ""}}]})
            + chunk({"tool_calls": [{"index": 0, "custom": {"input": code[:20]}}]})
            + chunk({"tool_calls": [{"index": 0, "custom": {"input": code[20:]}}]})
            + chunk({}, "tool_calls") + "data: [DONE]\n\n")


def _run(which: str, tmp_path: Path) -> tuple[dict, str]:
    """(codemode as declared, the script's result text) from ``which`` program."""
    _, _, requests = print_run_side_by_side(
        which, tmp_path, [Reply(raw=_custom_call(SCRIPT)), Reply(text="done")], "--tools", "read,codemode",
        "--no-session", model={"id": "test-model", "compat": {"supportsOpenAIGrammarTools": True}})
    [declared] = [t for t in requests[0].body["tools"] if t["type"] == "custom"]
    [result] = [m for m in requests[-1].body["messages"] if m["role"] == "tool"]
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    return declared, without_wall_time(text)


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_a_model_that_takes_grammar_tools_writes_the_script_as_raw_text_as_pi16_has_it(tmp_path):
    theirs, their_text = _run("pi16", tmp_path)
    ours, our_text = _run("ours", tmp_path)
    for declared in (theirs, ours):
        assert declared["custom"]["name"] == "codemode"
        assert declared["custom"]["format"]["type"] == "grammar"
        assert declared["custom"]["format"]["grammar"]["syntax"] == "lark"
    assert ours["custom"]["format"]["grammar"]["definition"] == GRAMMAR
    assert "alpha!" in our_text
    assert our_text == their_text
