"""grep, find and ls. grep runs both ways, with ripgrep and with its Python search;
both must give the same answers, .gitignore respected."""


import pytest

from support.tool_helpers import NoRipgrep, call, text_of
from pi_plugins.tools.environment import LocalEnvironment
from pi_plugins.tools.walk import glob_matcher

ENGINES = [
    pytest.param("python", id="python-fallback"),
    pytest.param(
        "ripgrep",
        id="ripgrep",
        marks=pytest.mark.requires("rg"),
    ),
]


@pytest.fixture(params=ENGINES)
def grep(request, ws):
    def run(args, cwd=ws):
        env = NoRipgrep(str(cwd)) if request.param == "python" else LocalEnvironment(str(cwd))
        return call("grep", args, cwd, env=env)

    return run


@pytest.fixture
def project(ws):
    (ws / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("import os\n\ndef main():\n    return 'needle'\n")
    (ws / "src" / "util.py").write_text("NEEDLE = 1\n")
    (ws / "src" / ".gitignore").write_text("generated.py\n")
    (ws / "src" / "generated.py").write_text("needle\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.py").write_text("needle\n")
    (ws / "debug.log").write_text("needle\n")
    (ws / "keep.log").write_text("needle kept\n")
    (ws / ".hidden.txt").write_text("needle hidden\n")
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("needle\n")
    (ws / "blob.bin").write_bytes(b"needle\x00\x01")
    return ws


def test_grep_finds_matches_and_respects_gitignore(grep, project):
    result = grep({"pattern": "needle"})
    assert not result.is_error
    assert sorted(text_of(result).splitlines()) == [
        ".hidden.txt:1: needle hidden",
        "keep.log:1: needle kept",
        "src/app.py:4:     return 'needle'",
    ]


def test_grep_ignore_case_literal_and_glob(grep, project):
    assert "src/util.py:1: NEEDLE = 1" in text_of(grep({"pattern": "needle", "ignoreCase": True}))
    assert text_of(grep({"pattern": "main()", "literal": True})) == "src/app.py:3: def main():"
    assert text_of(grep({"pattern": "needle", "glob": "*.txt"})) == ".hidden.txt:1: needle hidden"


def test_grep_glob_names_ignored_files_explicitly_but_never_enters_ignored_directories(grep, project):
    # As ripgrep does: a --glob the model gives wins over .gitignore for files.
    assert text_of(grep({"pattern": "needle", "glob": "*.log"})).splitlines() == [
        "debug.log:1: needle",
        "keep.log:1: needle kept",
    ]


def test_grep_context_lines_are_marked_apart_from_matches(grep, ws):
    (ws / "f.txt").write_text("a\nb\nmatch\nc\nd\n")
    assert text_of(grep({"pattern": "match", "context": 1})).splitlines() == [
        "f.txt-2- b",
        "f.txt:3: match",
        "f.txt-4- c",
    ]


def test_grep_in_a_single_file_shows_its_name(grep, project):
    assert text_of(grep({"pattern": "needle", "path": "src/app.py"})) == "app.py:4:     return 'needle'"


def test_grep_stops_at_the_limit_and_says_how_to_get_more(grep, ws):
    (ws / "many.txt").write_text("hit\n" * 50)
    result = grep({"pattern": "hit", "limit": 10})
    lines = text_of(result).split("\n\n")[0].splitlines()
    assert len(lines) == 10 and "limit=20" in text_of(result)
    assert result.details["matchLimitReached"] == 10


def test_grep_shows_a_match_after_the_limit_as_context_and_says_so_only_if_one_was_cut(grep, ws):
    (ws / "f.txt").write_text("one\nhit two\nhit three\nfour\n")
    result = grep({"pattern": "hit", "context": 1, "limit": 1})
    assert text_of(result).split("\n\n")[0].splitlines() == ["f.txt-1- one", "f.txt:2: hit two", "f.txt-3- hit three"]
    assert result.details == {"matchLimitReached": 1}
    exactly = grep({"pattern": "hit", "limit": 2})
    assert text_of(exactly) == "f.txt:2: hit two\nf.txt:3: hit three" and exactly.details is None


def test_grep_cuts_long_lines(grep, ws):
    (ws / "wide.txt").write_text("needle" + "x" * 1000 + "\n")
    result = grep({"pattern": "needle"})
    assert len(text_of(result).splitlines()[0]) < 600 and result.details["linesTruncated"]


def test_grep_without_matches_and_with_a_missing_path(grep, project):
    assert text_of(grep({"pattern": "absent-word"})) == "No matches found"
    missing = grep({"pattern": "x", "path": "nowhere"})
    assert missing.is_error and "nowhere does not exist" in text_of(missing)


def test_grep_looks_inside_an_ignored_directory_when_asked(grep, project):
    assert text_of(grep({"pattern": "needle", "path": "build"})) == "out.py:1: needle"


def test_grep_fallback_reports_a_bad_regular_expression(ws):
    (ws / "f.txt").write_text("x\n")
    result = call("grep", {"pattern": "("}, ws, env=NoRipgrep(str(ws)))
    assert result.is_error and "literal=true" in text_of(result)


def test_find_matches_names_at_any_depth_and_respects_gitignore(project):
    assert text_of(call("find", {"pattern": "*.py"}, project)).splitlines() == ["src/app.py", "src/util.py"]
    assert text_of(call("find", {"pattern": "*.log"}, project)) == "keep.log"


def test_find_patterns_with_directories_and_braces(project):
    assert text_of(call("find", {"pattern": "src/*.{py,txt}"}, project)).splitlines() == ["src/app.py", "src/util.py"]
    assert text_of(call("find", {"pattern": "src"}, project)) == "src/"


def test_find_path_patterns_are_relative_to_the_searched_directory(ws):
    for name in ["src/a.py", "pkg/src/b.py", "src/Big.PY"]:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("x\n")
    found = lambda pattern: sorted(text_of(call("find", {"pattern": pattern}, ws)).splitlines())  # noqa: E731
    assert found("src/*.py") == ["src/Big.PY", "src/a.py"]  # all lowercase: case ignored
    assert found("./src/*.py") == found("src/*.py")
    assert found("**/src/*.py") == ["pkg/src/b.py", "src/Big.PY", "src/a.py"]
    assert found("src/*.PY") == ["src/Big.PY"]
    assert found(f"{ws}/pkg/**") == ["pkg/src/", "pkg/src/b.py"]


def test_find_limit_and_no_results(ws):
    for i in range(5):
        (ws / f"f{i}.txt").write_text("")
    result = call("find", {"pattern": "*.txt", "limit": 3}, ws)
    assert text_of(result).startswith("f0.txt\nf1.txt\nf2.txt\n\n[") and "limit=6" in text_of(result)
    assert result.details["resultLimitReached"] == 3
    assert text_of(call("find", {"pattern": "*.md"}, ws)) == "No files found matching *.md"


def test_find_on_a_missing_or_plain_file_path_is_an_error(ws):
    (ws / "f.txt").write_text("")
    assert "does not exist" in text_of(call("find", {"pattern": "*", "path": "nope"}, ws))
    assert "not a directory" in text_of(call("find", {"pattern": "*", "path": "f.txt"}, ws))


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("**/*.json", "x.json", True),
        ("src/**/*.ts", "src/a/b/c.ts", True),
        ("src/**/*.ts", "lib/src/c.ts", True),
        ("/src/*.ts", "lib/src/c.ts", False),
        ("test_?.py", "test_a.py", True),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
        ("!*.md", "a.md", False),
    ],
)
def test_globs(pattern, path, expected):
    assert glob_matcher(pattern)(path) is expected


def test_ls_sorts_marks_directories_and_shows_hidden_entries(ws):
    (ws / "b.txt").write_text("")
    (ws / "A.txt").write_text("")
    (ws / ".env").write_text("")
    (ws / "src").mkdir()
    (ws / "dangling").symlink_to(ws / "missing")
    assert text_of(call("ls", {}, ws)).splitlines() == [".env", "A.txt", "b.txt", "src/"]


def test_ls_limit_empty_and_errors(ws):
    for i in range(4):
        (ws / f"f{i}").write_text("")
    limited = call("ls", {"limit": 2}, ws)
    assert text_of(limited).startswith("f0\nf1\n\n[Showing 2 of 4") and "limit=4" in text_of(limited)
    (ws / "empty").mkdir()
    assert text_of(call("ls", {"path": "empty"}, ws)) == "(empty directory)"
    assert "does not exist" in text_of(call("ls", {"path": "gone"}, ws))
    assert "not a directory" in text_of(call("ls", {"path": "f0"}, ws))


def test_rules_above_a_repository_top_do_not_apply_inside_it(grep, ws):
    (ws / ".gitignore").write_text("*.py\n")  # outside the repository below
    repo = ws / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "app.py").write_text("needle\n")
    assert text_of(grep({"pattern": "needle"}, cwd=repo)) == "app.py:1: needle"
    assert text_of(call("find", {"pattern": "*.py"}, repo)) == "app.py"


def test_rules_of_a_parent_directory_apply_below_it(grep, ws):
    (ws / ".gitignore").write_text("*.gen\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "a.gen").write_text("needle\n")
    (ws / "sub" / "b.txt").write_text("needle\n")
    assert text_of(grep({"pattern": "needle"}, cwd=ws / "sub")) == "b.txt:1: needle"


def test_grep_limit_keeps_the_last_match_context_and_stops(grep, ws):
    (ws / "f.txt").write_text("hit 1\nplain 2\nhit 3\nplain 4\nhit 5\nplain 6\n")
    result = grep({"pattern": "hit", "limit": 2, "context": 1})
    assert text_of(result).split("\n\n")[0].splitlines() == [
        "f.txt:1: hit 1",
        "f.txt-2- plain 2",
        "f.txt:3: hit 3",
        "f.txt-4- plain 4",
    ]
