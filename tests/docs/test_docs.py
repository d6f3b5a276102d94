"""The documentation's examples run and say what the docs say they do.

Rules the docs keep (docs/index.md says so too):
- every runnable example is ``docs/examples/NAME.py`` with its expected output in
  ``docs/examples/NAME.out``; it is run here and its output compared;
- every ```python block in ``docs/*.md`` is a doctest (``>>>``, run here), or starts with
  ``# docs/examples/...`` and is a verbatim excerpt of that file, or runs on its own
  (definitions and imports: it is executed here);
- every hook in ``hookspecs`` is implemented by at least one example;
- every option a ``pi`` command line in the docs uses exists.
"""

import ast
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hookspecs

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
PAGES = sorted(DOCS.glob("*.md"))
RUNNABLE = sorted(p for p in EXAMPLES.glob("*.py") if "__main__" in p.read_text())


def blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", page.read_text(), re.S | re.M)


def env(tmp_path: Path) -> dict:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
            "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PYTHONUNBUFFERED": "1"}


def test_the_docs_have_their_pages():
    names = {p.name for p in PAGES}
    assert {"index.md", "getting-started.md", "configuration.md", "sessions.md", "plugins.md",
            "packages.md", "json.md", "rpc-protocol.md"} <= names


@pytest.mark.process
@pytest.mark.parametrize("example", RUNNABLE, ids=lambda p: p.name)
def test_every_example_prints_what_its_out_file_says(example, tmp_path):
    expected = example.with_suffix(".out")
    assert expected.exists(), f"{example.name} needs {expected.name} with its expected output"
    out = subprocess.run([sys.executable, str(example)], cwd=tmp_path, env=env(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == expected.read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_blocks_are_doctests_excerpts_of_tested_examples_or_run(page):
    for block in blocks(page, "python"):
        if ">>>" in block:
            continue  # test_doctests_in_the_docs_pass runs it
        first, _, rest = block.partition("\n")
        match = re.fullmatch(r"# (docs/examples/\S+)", first.strip())
        if match is None:  # a self-contained snippet: it must run
            try:
                exec(compile(block, f"{page.name} block", "exec"), {"__name__": "docs_snippet"})
            except Exception as exc:
                pytest.fail(f"{page.name}: a python block that is not from docs/examples fails: "
                            f"{type(exc).__name__}: {exc}\n{block[:300]}")
            continue
        source = ROOT / match.group(1)
        assert source.exists(), f"{page.name} quotes {match.group(1)}, which does not exist"
        assert rest.strip() in source.read_text(), (
            f"{page.name}: the block quoting {match.group(1)} differs from the file:\n{rest[:300]}")


def example_outputs(page: Path) -> list[tuple[str, str]]:
    """(example path, the text block right after the block quoting it) for every quoted
    example that has an ``.out`` file: what the page says the example prints."""
    fences = list(re.finditer(r"^```(\w*)\n(.*?)^```\n", page.read_text(), re.S | re.M))
    found = []
    for block, after in zip(fences, fences[1:]):
        header = re.match(r"# (docs/examples/\S+\.py)\n", block.group(2))
        between = page.read_text()[block.end():after.start()]
        if block.group(1) == "python" and header and after.group(1) == "text" and not between.strip():
            if (ROOT / header.group(1)).with_suffix(".out").exists():
                found.append((header.group(1), after.group(2)))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_output_shown_after_an_example_is_its_out_file(page):
    for example, shown in example_outputs(page):
        expected = (ROOT / example).with_suffix(".out").read_text()
        assert shown == expected, f"{page.name}: the output shown for {example} is not its .out file"


def test_the_plugin_pages_examples_show_their_output():
    shown = [name for name, _ in example_outputs(DOCS / "plugins.md")]
    assert {"docs/examples/hooks_loop.py", "docs/examples/hooks_cli.py"} <= set(shown)


def test_the_architecture_page_shows_a_built_in_replaced_by_a_plugin():
    page = (DOCS / "architecture.md").read_text()
    assert "docs/examples/replace_compaction.py" in [name for name, _ in example_outputs(DOCS / "architecture.md")]
    assert '"-builtin:compaction"' in page
    out = (EXAMPLES / "replace_compaction.out").read_text()
    assert "compaction: dropped (-builtin:compaction" in out and "compacted (threshold)" in out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_doctests_in_the_docs_pass(page, tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.chdir(tmp_path)
    result = doctest.testfile(str(page), module_relative=False, verbose=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_every_hook_has_an_example():
    implemented = set()
    for example in EXAMPLES.rglob("*.py"):
        for node in ast.walk(ast.parse(example.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    "hookimpl" in ast.unparse(d) for d in node.decorator_list):
                implemented.add(node.name)
    hooks = {name for module in hookspecs.SPEC_MODULES for name in dir(module)
             if hasattr(getattr(module, name), "pi_spec")}
    assert hooks, "no hook specs found"
    assert sorted(hooks - implemented) == []
    plugins_page = (DOCS / "plugins.md").read_text()
    assert sorted(h for h in hooks if f"`{h}`" not in plugins_page) == []


def _help(*subcommand: str) -> str:
    from click.testing import CliRunner

    from pi_plugins.cli.main import main

    out = CliRunner().invoke(main, [*subcommand, "--help"], terminal_width=200)
    assert out.exit_code == 0, out.output
    return out.output


def test_the_options_of_every_pi_command_in_the_docs_exist():
    subcommands = {"install", "remove", "uninstall", "list", "plugins", "batch", "serve", "connect", "update"}
    helps: dict[str, str] = {}
    checked = 0
    for page in PAGES:
        for block in blocks(page, "bash"):
            for line in block.splitlines():
                words = line.split("#")[0].split()
                if not words or words[0] != "pi":
                    continue
                sub = words[1] if len(words) > 1 and words[1] in subcommands else ""
                if sub in ("install", "remove", "uninstall", "update"):
                    # pip's options follow SOURCE (update: its target or first option)
                    words = words[:3] + [w for w in words[3:] if not w.startswith("-")]
                text = helps.setdefault(sub, _help(sub) if sub else _help())
                for word in words[1:]:
                    option = word.split("=")[0]
                    if re.fullmatch(r"--?[a-z][a-z-]*", option):
                        assert re.search(rf"(^|[\s,/]){re.escape(option)}\b", text, re.M), (
                            f"{page.name}: `{line.strip()}` uses {option}, which `pi {sub} --help` lacks")
                        checked += 1
    assert checked > 20


def readme_command(line_start: str) -> str:
    """The README's indented command line that starts with ``line_start``."""
    lines = [line.strip() for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
             if line.startswith("    ") and line.strip().startswith(line_start)]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.process
def test_the_readme_main_command_runs_a_tool_with_no_key_and_no_network(tmp_path):
    command = readme_command("python3 -m venv .venv && .venv/bin/pip install -e . &&")
    pi_part = command.split("&& .venv/bin/pi ", 1)[1]
    args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', pi_part)]
    args = [str(ROOT / a) if a.startswith("docs/") else a for a in args]
    (tmp_path / "notes.txt").write_text("x")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "This folder holds:"
    assert "notes.txt" in done.stdout.splitlines()


def test_ci_runs_the_readme_test_command_exactly():
    command = readme_command("python3 -m venv .venv && .venv/bin/pip install -e '.[test]'")
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


@pytest.mark.process
def test_the_hello_plugin_tests_pass_with_only_the_test_kit(tmp_path):
    project = DOCS / "examples" / "hello-plugin"
    env = {**os.environ, "PYTHONPATH": str(project)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def _spec_kinds() -> dict[str, str]:
    from hookspecs.markers import dispatch_of

    kinds = {}
    for module in hookspecs.SPEC_MODULES:
        for name in dir(module):
            function = getattr(module, name)
            if hasattr(function, "pi_spec"):
                dispatch = dispatch_of(function)
                assert dispatch is not None, f"hook {name} declares no dispatch kind"
                kinds[name] = dispatch.describe()
    return kinds


def _table_kinds(page: str) -> dict[str, str]:
    """The "Every hook" table of plugins.md: hook name → kind as written."""
    section = page.split("## Every hook", 1)[1].split("\n## ", 1)[0]
    kinds: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        for hook in re.findall(r"`(\w+)`", cells[0]):
            assert hook not in kinds, f"{hook} is in the table twice"
            kinds[hook] = cells[1]
    return kinds


def test_the_docs_hook_table_says_each_kind_the_spec_declares():
    specs = _spec_kinds()
    table = _table_kinds((DOCS / "plugins.md").read_text())
    assert sorted(set(specs) - set(table)) == [], "hooks missing from the docs table"
    assert sorted(set(table) - set(specs)) == [], "the docs table names hooks without a spec"
    wrong = {h: (table[h], specs[h]) for h in specs if table[h] != specs[h]}
    assert wrong == {}, "docs table kind != spec kind"


def test_the_docs_table_check_fails_on_a_disagreement():
    page = (DOCS / "plugins.md").read_text().replace("| `message_end` | chain(message) |",
                                                     "| `message_end` | notify |")
    assert _table_kinds(page)["message_end"] == "notify" != _spec_kinds()["message_end"]


def test_every_ctx_member_is_on_the_app_context_and_in_the_docs():
    from pi_core.protocol.ctx import MEMBERS
    from pi_core.context import Context as HarnessContext

    missing = [m for m in MEMBERS if not hasattr(HarnessContext, m) and m not in
               ("cwd", "agent_dir", "settings", "options", "plugins", "ui", "events", "flags", "harness", "agent")]
    assert missing == []
    page = (DOCS / "plugins.md").read_text()
    table = page.split("| member | what", 1)[1].split("\n\n", 1)[0]
    assert sorted(m for m in MEMBERS if f"`{m}" not in table and f" {m}(" not in table
                  and f"`await {m}" not in table) == []


def test_interactive_and_rpc_pages_agree_that_rpc_dialogs_go_to_the_client():
    interactive = (DOCS / "interactive.md").read_text()
    rpc = (DOCS / "rpc.md").read_text()
    assert "extension_ui_request" in rpc
    sentence = next(s for s in re.split(r"(?<=\.)\s", " ".join(interactive.split())) if "rpc mode" in s.lower()
                    and "dialog" in s.lower())
    assert "go to the client" in sentence and "rpc" not in sentence.split("defaults")[0].lower()


def test_every_retry_setting_the_code_reads_is_on_the_configuration_page():
    read = set()
    for folder in ("pi_core", "pi_plugins"):
        for source in (ROOT / folder).rglob("*.py"):
            read.update(re.findall(r"""["'](retry\.[A-Za-z]+(?:\.[A-Za-z]+)*)["']""", source.read_text()))
    page = (DOCS / "configuration.md").read_text()
    assert "retry.provider.maxRetries" in read
    assert [key for key in sorted(read) if f"`{key}`" not in page] == []
