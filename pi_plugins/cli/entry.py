"""The ``pi`` console script. ``pi --help`` is answered from a cache of click's own
output, and ``pi --version`` from ``pi_core.__version__``, without importing click or
anything else (most of what they used to cost); every other command runs the click
command line (:mod:`pi_plugins.cli.main`).

The cache (in :mod:`pi_core.paths`) is keyed on the pi version, the size
and time of ``main.py`` (the click commands), the width click would wrap to and the
installed packages (their plugins' flags are part of the help), so it is rewritten
whenever the help could differ; with a plugin file to load, or where the cache cannot be
written, click answers.
"""

import os
import sys

from pi_core.paths import cache_dir

_HELP = (["--help"], ["-h"])
_VERSION = (["--version"], ["-v"])


def main() -> int:
    if sys.argv[1:] in _VERSION:
        print_version()
        return 0
    if sys.argv[1:] in _HELP and not _plugins_may_add_flags():
        path = _cache_path()
        if path is not None:
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                return _help_into_cache(path)
            sys.stdout.write(text)
            sys.stdout.flush()
            return 0
    import atexit
    import gc

    # What a run built lives until the end: frozen at exit, the interpreter's last
    # collections have nothing to walk (5% of a ``pi -p``); everything is still closed.
    atexit.register(gc.freeze)
    return command_line()()


def command_line():
    """The click command line (:mod:`pi_plugins.cli.main`), imported with no collection
    meanwhile: what it imports (click, its commands) lives as long as the process, so it
    is frozen then (``gc.freeze``) and no later collection walks it again."""
    from pi_plugins.lasting import lasting

    with lasting():
        from pi_plugins.cli.main import main
    return main


def print_version() -> None:
    """The bare version, as pi prints it: on stdout when run from a terminal, else on
    stderr (pi keeps stdout for the protocol whenever stdin is not a terminal, and pi-acp
    counts on it: what it reads on stdout it compares with the npm release of pi)."""
    from pi_core import __version__

    stream = sys.stdout if sys.stdin is not None and sys.stdin.isatty() else sys.stderr
    stream.write(f"{__version__}\n")
    stream.flush()


def _plugins_may_add_flags() -> bool:
    """A plugin file may add flags (its code may change at any time): click lists them,
    and nothing is cached. Installed plugins' flags are in the cached text, which a
    change of the installed packages replaces (:func:`_installed_key`)."""
    from pi_plugins.cli.help_flags import plugin_files

    return plugin_files()


def _help_into_cache(path: str) -> int:
    """Click's help, printed and kept for next time."""
    import io
    from contextlib import redirect_stdout

    from pi_plugins.cli.main import main as cli

    captured = io.StringIO()
    code = 0
    with redirect_stdout(captured):
        try:
            cli.main(sys.argv[1:], prog_name="pi")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
    text = captured.getvalue()
    sys.stdout.write(text)
    sys.stdout.flush()
    if code == 0 and text:
        from pi_core.paths import write_file

        write_file(path, text.encode("utf-8"))
    return code


def _cache_path() -> str | None:
    from pi_core import __version__

    try:
        cli = os.stat(os.path.join(os.path.dirname(os.path.abspath(__file__)), "main.py"))
    except OSError:
        return None
    folder = cache_dir()
    if folder is None:
        return None
    key = (f"{__version__}-{cli.st_size}-{cli.st_mtime_ns}-{_width()}-{_installed_key()}-"
           f"{sys.argv[1].lstrip('-')}")
    return os.path.join(folder, f"help-{key}.txt")


def _installed_key() -> str:
    """What changes when a package is installed or removed: the modification times of
    the folders on ``sys.path`` (installing adds a ``.dist-info`` folder to one)."""
    import zlib

    stamps = []
    for folder in sys.path:
        try:
            stamps.append(f"{folder}:{os.stat(folder or '.').st_mtime_ns}")
        except OSError:
            continue
    return f"{zlib.crc32(chr(0).join(stamps).encode()):08x}"


def _width() -> int:
    """The width click's help formatter wraps to (as ``shutil.get_terminal_size``)."""
    try:
        columns = int(os.environ.get("COLUMNS", 0))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            # No __stdout__ (None) raises AttributeError, caught below.
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        if columns <= 0:
            columns = 80
    return max(min(columns, 80) - 2, 50)
