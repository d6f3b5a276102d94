"""Side by side with pi 1.6 (on Node 22) against the same scripted server, each in a home
of its own, ``--tools +codemode``: the ``codemode`` tool both declare, and the result
text both send back for the same scripts (the wall time aside). The descriptions are each
program's own words: compared are the schema, and the globals and options line they name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.codemode_scripts import print_run_side_by_side
from support.llm_server import Reply

pytestmark = [pytest.mark.requires("pi16"), pytest.mark.process]

SCRIPTS = [
    'const [a, b] = await Promise.all([tools.read({path: "a.txt"}), tools.read({path: "b.txt"})]);\n'
    'text("first"); console.log("log", 1, {x: 2}); console.warn("w");\nreturn [a, b];',
    "text('before'); await tools.read({path: 'a.txt'}); throw 'stop'",
    # 3 s: long enough that either program runs text() before its timer ends on a loaded machine
    '// @options: {"timeout_ms": 3000}\ntext("spin"); while (true) {}',
    'const x = 1;\n// @options: {"timeout_ms": 5}',
    "store('k', {v: 1}); return load('k')",
    "return [typeof require, typeof fetch, typeof setTimeout].join()",
    "return [await models.getAvailableOfType('chat', 'local'), await models.getModelOfType('chat', 'local', 'no')]",
    "return await models.classify({provider: 'local', id: 'test-model'}, {state: {}, questions: {}})",
    "return await models.generateImages({provider: 'local', id: 'test-model'}, {input: []})",
]


def run(which: str, tmp_path: Path) -> tuple[dict, list[str]]:
    replies = [*[Reply(tool_calls=[("codemode", {"code": code}, f"call_{i}")]) for i, code in enumerate(SCRIPTS)],
               Reply(text="done")]
    _, _, requests = print_run_side_by_side(which, tmp_path, replies, "--tools", "+codemode", "--no-session")
    declared = {t["function"]["name"]: t["function"] for t in requests[0].body["tools"]}
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
             for m in requests[-1].body["messages"] if m["role"] == "tool"]
    return declared, texts


def without_wall_time(text: str) -> str:
    """Without the wall time, and the test server's port (each program has a server of its own)."""
    lines = text.split("\n")
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT",
                  "\n".join(line for line in lines if not line.startswith("Wall time ")))


def test_pi16_and_we_declare_codemode_alike_and_answer_scripts_alike(tmp_path):
    theirs, their_texts = run("pi16", tmp_path)
    ours, our_texts = run("ours", tmp_path)
    assert ours["codemode"]["parameters"] == theirs["codemode"]["parameters"]
    assert sorted(ours) == sorted(theirs)
    for name in ("text(", "image(", "console.log(", "exit()", "store(", "load(", "ALL_TOOLS", "searchTools(",
                 "describeTool(", "describeNamespace(", "models", "==> text N/M <==", "<console_output>",
                 '// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}'):
        assert name in theirs["codemode"]["description"] and name in ours["codemode"]["description"], name
    for tool in ("read", "bash", "edit", "write"):  # mode "on": declared tools say how scripts call them
        assert f"`tools.{tool}(args)` resolves to" in theirs[tool]["description"]
        assert f"`tools.{tool}(args)` resolves to" in ours[tool]["description"]
    assert len(our_texts) == len(their_texts) == len(SCRIPTS)
    for index, (mine, pis) in enumerate(zip(our_texts, their_texts, strict=True)):
        assert without_wall_time(mine) == without_wall_time(pis), index
