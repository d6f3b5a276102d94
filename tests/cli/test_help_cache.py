"""``pi --help`` from the console script: click's own text, answered from a cache on the
next run without importing click, and never a stale one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pi_plugins.cli.entry as entry
from pi_core import __version__

PROBE = ("import sys; sys.argv = ['pi'] + sys.argv[1:]; from pi_plugins.cli.entry import main; "
         "code = main(); print('click' in sys.modules, file=sys.stderr); sys.exit(code)")


def run(cache: Path, *args: str, columns: str = "100") -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": columns}
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=60)


def click_help(*args: str, columns: str = "100") -> str:
    env = {**os.environ, "COLUMNS": columns}
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.process
def test_help_is_clicks_and_the_second_run_does_not_import_click(tmp_path):
    first = run(tmp_path, "--help")
    assert first.returncode == 0 and first.stderr.strip() == "True"
    assert first.stdout == click_help("--help") and "--session" in first.stdout
    second = run(tmp_path, "--help")
    assert second.returncode == 0 and second.stderr.strip() == "False"
    assert second.stdout == first.stdout
    short = run(tmp_path, "-h")
    assert short.stdout == click_help("-h")


@pytest.mark.process
def test_another_width_or_a_changed_cli_is_not_answered_from_the_cache(tmp_path, monkeypatch):
    run(tmp_path, "--help", columns="100")
    narrow = run(tmp_path, "--help", columns="60")
    assert narrow.stderr.strip() == "True" and narrow.stdout == click_help("--help", columns="60")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(sys, "argv", ["pi", "--help"])
    assert len(list((tmp_path / "pi-harness").glob("help-*.txt"))) == 2  # one per width
    key = entry._cache_path()  # (this process's sys.path: another key than the runs')
    assert key is not None
    real_stat = os.stat

    def touched(path, *a, **k):  # the click commands (main.py) edited: their size and time change
        result = real_stat(path, *a, **k)
        if str(path).endswith("main.py"):
            return os.stat_result((*result[:6], result[6] + 1, *result[7:]))
        return result

    monkeypatch.setattr(os, "stat", touched)
    assert entry._cache_path() != key


@pytest.mark.process
def test_the_version_alone_is_answered_without_importing_click(tmp_path):
    for flag in ("--version", "-v"):
        done = run(tmp_path, flag)
        # from a program (stdin is not a terminal) pi prints its bare version on stderr;
        # then the probe says whether click was imported
        assert done.returncode == 0 and done.stdout == ""
        assert done.stderr == f"{__version__}\nFalse\n"
    assert not (tmp_path / "pi-harness").exists()


@pytest.mark.process
def test_other_commands_go_to_click(tmp_path):
    done = run(tmp_path, "--no-session", "--version")  # click exits by itself: the probe prints nothing more
    assert done.returncode == 0 and done.stdout == "" and done.stderr == f"{__version__}\n"
    assert not (tmp_path / "pi-harness").exists()


@pytest.mark.process
def test_a_package_installed_or_removed_changes_the_cached_help(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    env_path = {"PYTHONPATH": str(site)}

    def help_text() -> str:
        env = {**os.environ, **env_path, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "100",
               "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
        done = subprocess.run([sys.executable, "-c", PROBE, "--help"], env=env, capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "--shout" not in help_text() and "--shout" not in help_text()  # cached, still none
    (site / "pi_shout.py").write_text(
        "from pi_core import hookimpl\nfrom pi_core.protocol.commands import Flag\n\n"
        "@hookimpl\ndef register_flags():\n    return [Flag('shout', 'Answer in capitals')]\n")
    info = site / "pi_shout-1.0.dist-info"
    info.mkdir()  # what pip install leaves: the folder on sys.path changes
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pi-shout\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pi.plugins]\nshout = pi_shout\n")
    assert "--shout" in help_text() and "--shout" in help_text()
    (info / "entry_points.txt").unlink(), (info / "METADATA").unlink(), info.rmdir()
    assert "--shout" not in help_text()


def test_built_in_switches_load_no_plugin_for_the_help(tmp_path, monkeypatch):
    """``-builtin:NAME`` in settings and ``-e builtin:NAME`` name no plugin that could
    add a flag, so ``pi --help`` stays without plugins."""
    from pi_plugins.cli.help_flags import extension_args, plugin_files

    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    (agent / "settings.json").write_text('{"extensions": ["-builtin:compaction", "+builtin:budget"]}')
    assert not plugin_files(str(tmp_path))
    assert extension_args(["-e", "builtin:compaction", "--extension=builtin:budget"]) == ([], True)
    (agent / "settings.json").write_text('{"extensions": ["-builtin:compaction", "./mine.py"]}')
    assert plugin_files(str(tmp_path))
