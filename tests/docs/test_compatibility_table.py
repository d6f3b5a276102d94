"""docs/pi-compatibility.md's table of pi 1.6's features cannot rot: every row says what
it is here, and every test a row names exists (its file, and a test function of that
name in it), so a renamed or deleted test breaks this test rather than the page."""

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "pi-compatibility.md"
GROUPS = ["Command line", "Catalogue and providers", "Sign-ins", "settings.json", "models.json",
          "The bash tool's environment", "Events on the wire (JSON and RPC)",
          "Extension events and API", "Tools and templates", "Sessions",
          "MCP, codemode and tool_search", "The chat"]
STATUSES = ("present", "different", "partial", "missing")
TEST_CELL = re.compile(r"^`(tests/[\w/]+\.py)::(test_\w+)`$")


def table_rows() -> dict[str, list[list[str]]]:
    """The rows of each group's table in the feature-by-feature section."""
    section = PAGE.read_text().split("## pi 1.6, feature by feature\n", 1)[1].split("\n## ", 1)[0]
    groups: dict[str, list[list[str]]] = {}
    group = None
    for line in section.splitlines():
        if line.startswith("### "):
            group = line[4:].strip()
            groups[group] = []
        elif group and line.startswith("| ") and not line.startswith("| pi 1.6 | here | test |"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            groups[group].append(cells)
    return groups


@cache
def functions_in(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")}


def test_every_group_of_the_issue_has_its_table():
    groups = table_rows()
    assert list(groups) == GROUPS
    assert all(groups.values()), [name for name, rows in groups.items() if not rows]
    assert sum(len(rows) for rows in groups.values()) >= 150


def test_every_row_says_whether_it_is_present_different_partial_or_missing():
    for group, rows in table_rows().items():
        for cells in rows:
            assert len(cells) == 3, (group, cells)
            assert cells[1].startswith(STATUSES), (group, cells[0], cells[1])


def test_every_test_the_table_names_exists():
    named = []
    for group, rows in table_rows().items():
        for feature, status, test in rows:
            if test == "—":
                assert not status.startswith("present"), f"{group}: {feature} is marked present but names no test"
                continue
            match = TEST_CELL.match(test)
            assert match, f"{group}: {feature}: the test cell {test!r} is not `tests/FILE.py::test_NAME`"
            named.append(match.groups())
    missing = [f"{path}::{name}" for path, name in named
               if not (ROOT / path).is_file() or name not in functions_in(path)]
    assert not missing, f"the compatibility table names tests that do not exist: {missing}"
