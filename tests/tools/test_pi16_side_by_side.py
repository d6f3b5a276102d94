"""find, edit and prompt-template arguments beside the real pi 1.6: the same input to
both (its tools and template functions run by ``pi16_tools_probe.mjs``), the same answer.
pi 1.6's find runs fd (Debian's ``fdfind``), so those cases need it too."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from pi_plugins.prompt_templates import parse_args, substitute
from support.programs import NODE22, PI16
from support.tool_helpers import call, text_of

pytestmark = [pytest.mark.requires("pi16"), pytest.mark.process]

PROBE = Path(__file__).parent / "pi16_tools_probe.mjs"


def pi16(*args: str) -> dict:
    done = subprocess.run([str(NODE22), str(PROBE), *args], capture_output=True, text=True, check=True,
                          timeout=60, env={**os.environ, "PI16_PACKAGE": str(PI16)})
    return json.loads(done.stdout)


@pytest.fixture
def tree(tmp_path):
    """A git work tree (Debian's fd is too old for pi's flag for trees outside git)."""
    root = tmp_path / "tree"
    for name in ["src/a.ts", "src/B.TS", "src/deep/c.ts", "pkg/src/b.ts", "pkg/src/a.md", "top.ts", "docs/x.md"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


FIND_PATTERNS = ["src/*.ts", "**/src/*.ts", "./src/*.ts", "*.ts", "src/**", "src/**/*.ts", "SRC/*.ts",
                 "*.TS", "src", "pkg/src/*", "*/src/*.ts", "{src,docs}/*.{ts,md}", "ABSOLUTE/src/*.ts"]


@pytest.mark.requires("fdfind")
@pytest.mark.parametrize("pattern", FIND_PATTERNS)
def test_find_matches_the_same_paths_as_pi16(tree, pattern):
    pattern = pattern.replace("ABSOLUTE", str(tree))
    theirs = pi16("find", str(tree), json.dumps({"pattern": pattern}))
    ours = text_of(call("find", {"pattern": pattern}, tree))
    if theirs["text"].startswith("No files found"):
        assert ours.startswith("No files found")
    else:
        assert sorted(ours.splitlines()) == sorted(theirs["text"].splitlines())


TEN = "".join(f"line {n}\n" for n in range(1, 31))
EDITS = {
    "middle": (TEN, [{"oldText": "line 15\n", "newText": "fifteen\nand more\n"}]),
    "first line": (TEN, [{"oldText": "line 1\n", "newText": ""}]),
    "two hunks": (TEN, [{"oldText": "line 3\n", "newText": "three\n"}, {"oldText": "line 27", "newText": "27"}]),
    "no final newline": ("a\nb\nc", [{"oldText": "c", "newText": "C"}]),
    "adds a final newline": ("a\nb", [{"oldText": "b", "newText": "b\n"}]),
    "crlf": ("a\r\nb\r\nc\r\n", [{"oldText": "b", "newText": "B"}]),
}


@pytest.mark.parametrize("case", sorted(EDITS))
def test_edit_details_carry_the_same_unified_patch_as_pi16(tmp_path, case):
    content, edits = EDITS[case]
    for side in ("theirs", "ours"):
        (tmp_path / side / "sub").mkdir(parents=True)
        (tmp_path / side / "sub" / "f.txt").write_bytes(content.encode())
    args = {"path": "sub/f.txt", "edits": edits}
    theirs = pi16("edit", str(tmp_path / "theirs"), json.dumps(args))
    ours = call("edit", args, tmp_path / "ours")
    assert ours.details["patch"] == theirs["details"]["patch"]
    assert ours.details["diff"] == theirs["details"]["diff"]
    assert (tmp_path / "ours" / "sub" / "f.txt").read_bytes() == (tmp_path / "theirs" / "sub" / "f.txt").read_bytes()


TEMPLATE = ("[$1][$2][$3] [${1:-one}] [${2:-two}] [${@:-all}] [${ARGUMENTS:-args}] [${@:2}] [${@:1:2}] "
            "[$ARGUMENTS] [$10] [${10:-ten}] [${1:-a:-b}] [${3:-x y}] [${2:-}] [${1}] [$@x]")
ARGUMENTS = [
    "", "a", "a b c", '"API compatibility" next', "doesn't stop", "'it\\'s' here", '"the \\"fast\\" path"',
    '"unclosed more words', "'a b' 'c", '"a \'b c\'', 'a"b c" "x y"z w', '"" b', "x\\ y \"a\\\\b\"",
    "tab\tand\nnewline  spaces", "''", '"end\\\\"',
]


@pytest.mark.parametrize("text", ARGUMENTS)
def test_template_arguments_and_defaults_fill_in_as_pi16(text):
    theirs = pi16("template", TEMPLATE, text)
    assert parse_args(text) == theirs["args"]
    assert substitute(TEMPLATE, parse_args(text)) == theirs["expanded"]


def test_a_truncated_commands_full_output_file_is_readable_only_by_the_user_as_pi16_makes_it(tmp_path):
    theirs = pi16("bash", str(tmp_path), json.dumps({"command": "seq 1 100000"}))["details"]["fullOutputPath"]
    ours = call("bash", {"command": "seq 1 100000"}, tmp_path).details["fullOutputPath"]
    try:
        for path in (theirs, ours):
            assert re.fullmatch(r"pi-bash-[0-9a-f]{16}\.log", Path(path).name)
        assert stat.S_IMODE(os.stat(ours).st_mode) == stat.S_IMODE(os.stat(theirs).st_mode) == 0o600
        assert Path(ours).read_bytes() == Path(theirs).read_bytes()
    finally:
        for path in (theirs, ours):
            os.unlink(path)


GREP_FILES = {
    "a.txt": "alpha\nbeta\ngamma needle\ndelta\nepsilon\nzeta\neta needle\ntheta\n",
    "b.txt": "needle first\nsecond\nthird\n",
    "c/close.txt": "one\nneedle two\nneedle three\nfour\nfive\nneedle six\n",
    "crlf.txt": "first\r\nneedle\r\nlast with a \r inside\r\n",
}
GREP_CASES = {
    "context across files": {"pattern": "needle", "context": 2},
    "context larger than the file": {"pattern": "needle", "context": 9, "path": "b.txt"},
    "a match inside the last match's trailing context": {"pattern": "needle", "context": 1, "limit": 1,
                                                         "path": "c"},
    "the limit met exactly": {"pattern": "needle", "limit": 3, "path": "c"},
    "the limit with more beyond the context": {"pattern": "needle", "context": 1, "limit": 1, "path": "a.txt"},
    "no context past the limit": {"pattern": "needle", "limit": 2, "path": "c"},
    "carriage returns": {"pattern": "needle|inside", "context": 1, "path": "crlf.txt"},
    "a ./ glob": {"pattern": "needle", "glob": "./*.txt"},
}


@pytest.mark.requires("rg")
@pytest.mark.parametrize("case", sorted(GREP_CASES))
def test_grep_context_lines_and_limits_read_as_pi16s(tree, case):
    for name, content in GREP_FILES.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(content.encode())
    args = GREP_CASES[case]
    theirs = pi16("grep", str(tree), json.dumps(args))
    ours = call("grep", args, tree)
    assert by_file(text_of(ours)) == by_file(theirs["text"])
    assert ours.details == theirs["details"]


def by_file(text: str) -> tuple[dict, str]:
    """Each file's lines in order, and the notice: ripgrep searches files in parallel, so
    the files come in any order."""
    body, _, notice = text.partition("\n\n[")
    files: dict[str, list[str]] = {}
    for line in body.split("\n"):
        files.setdefault(re.split(r"[:-]\d+[:-] ", line, maxsplit=1)[0], []).append(line)
    return files, notice
