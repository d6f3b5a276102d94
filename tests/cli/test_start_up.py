"""What the ``pi`` process does before its work to start quickly: attrs' generated methods
come from a cache written by an earlier run, and the garbage collector waits until the
app is built. Neither may change what pi does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

# A class with the methods attrs generates (init with defaults and converters, eq, repr,
# hash, order); prints how it behaves and how many times compile() ran.
PROBE = """
import builtins, sys
from pi_core.app.attrs_cache import install
calls = []
real_compile = builtins.compile
def counting(*args, **kwargs):
    calls.append(args[1])
    return real_compile(*args, **kwargs)
builtins.compile = counting
install(sys.argv[1])
import attrs
@attrs.frozen(order=True)
class Point:
    x: int = attrs.field(converter=int)
    y: list = attrs.Factory(list)
p = Point("3")
print(repr(p), p == Point(3), p < Point(4), hash(Point(1, ())) == hash((hash("<attrs generated hash __main__.Point>"), 1, ())))
try:
    p.x = 1
except attrs.exceptions.FrozenInstanceError:
    print("frozen")
# (attr._make's own few classes compile before it can be patched)
print(sum(1 for name in calls if name.startswith("<attrs generated") and " attr._make." not in name))
"""


def probe(cache: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(cache)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_attrs_methods_come_from_the_cache_on_the_next_run_and_behave_the_same(tmp_path):
    cache = tmp_path / "cache"
    first = probe(cache)
    assert first[:2] == ["Point(x=3, y=[]) True True True", "frozen"]
    assert int(first[2]) >= 1 and list(cache.iterdir())
    second = probe(cache)
    assert second[:2] == first[:2] and second[2] == "0"


def test_a_damaged_attrs_cache_is_compiled_again_and_replaced(tmp_path):
    cache = tmp_path / "cache"
    probe(cache)
    [file] = cache.iterdir()
    file.write_bytes(file.read_bytes()[:100])
    again = probe(cache)
    assert again[:2] == ["Point(x=3, y=[]) True True True", "frozen"] and int(again[2]) >= 1
    assert probe(cache)[2] == "0"


def test_attrs_imported_before_is_patched_at_once(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import attrs; import sys; "
                           "from pi_core.app.attrs_cache import install; "
                           "install(sys.argv[1]); attrs.define(type('A', (), {}))", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [p.name.startswith("attrs-") for p in tmp_path.iterdir()] == [True]


RECORDER = '''
import gc, json, os
from pi_core import hookimpl

def note(when):
    with open(os.environ["GC_LOG"], "a") as f:
        f.write(json.dumps([when, gc.isenabled()]) + "\\n")

@hookimpl
def session_start(event, ctx):
    note("session_start")

@hookimpl
def agent_start(event, ctx):
    note("agent_start")
'''


def test_the_collector_waits_for_start_up_and_runs_for_the_session(pi, server, tmp_path):
    (tmp_path / "recorder.py").write_text(RECORDER)
    log = tmp_path / "gc.log"
    pi.env["GC_LOG"] = str(log)
    console_script = str(Path(sys.executable).parent / "pi")  # what pip installed
    for command in (pi.command("-e", str(tmp_path / "recorder.py"), "-p", "hi"),
                    [console_script, *pi.flags("-e", str(tmp_path / "recorder.py"), "-p", "hi")]):
        server.push(Reply(text="Hello."))
        done = subprocess.run(command, cwd=pi.cwd, env=pi.env, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Hello.\n"
    notes = [json.loads(line) for line in log.read_text().splitlines()]
    assert notes == [["session_start", False], ["agent_start", True]] * 2
    assert len(pi.sessions()) == 2


def test_resume_leaves_a_collector_it_did_not_pause_alone():
    done = subprocess.run([sys.executable, "-c", "import gc; gc.disable(); "
                           "from pi_core.app.collector import resume; resume(); "
                           "print(gc.isenabled(), gc.get_freeze_count())"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "0"]


DISCOVER = """
import sys
sys.path.insert(0, sys.argv[2])
from pi_core.app import entry_point_cache
entry_point_cache.FOLDER = sys.argv[1]
from pi_core.app.discovery import _entry_points
builtin, others = _entry_points()
print(len(builtin), [(e.name, e.value, e.distribution, e.version) for e in others])
print("importlib.metadata" in sys.modules, others[0].load().__name__ if others else None)
"""


def discover(cache: Path, site: Path) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", DISCOVER, str(cache), str(site)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found, asked = done.stdout.splitlines()
    return found, asked


def install(site: Path, name: str, entry_points: str) -> Path:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    (site / f"{name.replace('-', '_')}.py").write_text("")
    return info


def test_entry_points_come_from_the_cache_until_a_distribution_changes(tmp_path):
    cache, site = tmp_path / "cache", tmp_path / "site"
    install(site, "pi-alpha", "[pi.plugins]\nalpha = pi_alpha\n")
    first = discover(cache, site)
    assert "('alpha', 'pi_alpha', 'pi-alpha', '1.0')" in first[0] and first[1] == "True pi_alpha"
    again = discover(cache, site)
    assert again == (first[0], "False pi_alpha")  # importlib.metadata was not needed
    beta = install(site, "pi-beta", "[pi.plugins]\nbeta = pi_beta\n")
    installed = discover(cache, site)
    assert "'beta'" in installed[0] and installed[1].startswith("True")
    (beta / "entry_points.txt").write_text("[pi.plugins]\ngamma = pi_beta\n")  # edited in place
    edited = discover(cache, site)
    assert "'gamma'" in edited[0] and "'beta'" not in edited[0]
    assert int(edited[0].split()[0]) == int(first[0].split()[0]) > 0  # the built-ins


def test_environments_that_take_turns_each_keep_their_entry_points(tmp_path):
    cache, one, two = tmp_path / "cache", tmp_path / "one", tmp_path / "two"
    install(one, "pi-alpha", "[pi.plugins]\nalpha = pi_alpha\n")
    install(two, "pi-beta", "[pi.plugins]\nbeta = pi_beta\n")
    assert discover(cache, one)[1] == "True pi_alpha" and discover(cache, two)[1] == "True pi_beta"
    assert discover(cache, one)[1] == "False pi_alpha" and discover(cache, two)[1] == "False pi_beta"


def test_without_a_cache_folder_importlib_metadata_is_asked(tmp_path):
    site = tmp_path / "site"
    install(site, "pi-alpha", "[pi.plugins]\nalpha = pi_alpha\n")
    code = DISCOVER.replace("entry_point_cache.FOLDER = sys.argv[1]", "")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "unused"), str(site)],
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.splitlines()[1] == "True pi_alpha"
    assert not (tmp_path / "unused").exists()


EXIT_PLUGIN = '''
import atexit, os, sys, threading, time
from pi_core import hookimpl

LOG = os.environ["EXIT_LOG"]

def note(text):
    with open(LOG, "a") as f:
        f.write(text + "\\n")

class TornDown:
    def __del__(self, os=os, log=LOG):  # what it needs, kept for the teardown
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, b"torn down\\n")
        os.close(fd)

KEPT = TornDown()  # freed only by the interpreter's teardown

@hookimpl
def session_shutdown(event, ctx):
    atexit.register(note, "atexit hook")
    sys.stdout.write("x" * 200_000)  # still in the buffer when the run returns
    if os.environ.get("EXIT_THREAD"):
        def late():
            time.sleep(0.3)
            note("thread done")
        threading.Thread(target=late).start()
'''


def one_shot(pi, tmp_path, *flags: str, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    (tmp_path / "exits.py").write_text(EXIT_PLUGIN)
    log = tmp_path / "exit.log"
    log.unlink(missing_ok=True)
    done = subprocess.run(pi.command("-e", str(tmp_path / "exits.py"), *flags), cwd=pi.cwd,
                          env={**pi.env, "EXIT_LOG": str(log), **env}, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done, log.read_text().splitlines() if log.exists() else []


def test_a_one_shot_run_ends_after_its_hooks_and_output_without_the_teardown(pi, server, tmp_path):
    server.push(Reply(text="Hello."))
    done, notes = one_shot(pi, tmp_path, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello.\n" + "x" * 200_000, done.stderr
    assert notes == ["atexit hook"]  # run; the module teardown was not
    server.push(Reply(status=401, error="invalid api key"))
    failed, notes = one_shot(pi, tmp_path, "-p", "hi")
    assert failed.returncode == 1 and "invalid api key" in failed.stderr
    assert failed.stdout == "x" * 200_000 and notes == ["atexit hook"]
    server.push(Reply(text="Hello."))
    events, notes = one_shot(pi, tmp_path, "--mode", "json", "hi")
    assert events.returncode == 0 and '"agent_end"' in events.stdout
    assert events.stdout.endswith("x" * 200_000) and notes == ["atexit hook"]


def test_a_run_with_a_thread_still_going_waits_for_it_and_exits_as_ever(pi, server, tmp_path):
    server.push(Reply(text="Hello."))
    done, notes = one_shot(pi, tmp_path, "-p", "hi", EXIT_THREAD="1")
    assert done.returncode == 0, done.stderr
    assert notes[0] == "thread done" and sorted(notes) == ["atexit hook", "thread done", "torn down"]


def test_leave_does_nothing_unless_the_run_allowed_it():
    done = subprocess.run([sys.executable, "-c", "from pi_core.app import quick_exit; "
                           "quick_exit.leave(3); print('still here')"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "still here\n"
