"""The plugins' flags in ``pi --help``, as pi's ``--help`` lists its extensions' flags.

The plugins that would load are asked, the built-in ones included (the ``budget``
plugin's ``--max-cost``…); ``pi --help`` itself is answered from a cache
(:mod:`pi_plugins.cli.entry`) but where a plugin file could add flags, so this runs once per
installation. :func:`plugin_files`, the check for such a file, imports no plugin machinery.
"""

from __future__ import annotations

import os

#: The run command's options that take a value (so ``-e`` is not read inside one).
_NO_EXTENSIONS = ("-ne", "--no-extensions")


def extension_args(args: list[str]) -> tuple[list[str], bool]:
    """(the ``-e`` / ``--extension`` paths, whether discovery is on) from raw arguments."""
    paths, discover, i = [], True, 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            break
        if word in ("-e", "--extension"):
            if i < len(args):
                paths.append(args[i])
                i += 1
        elif word.startswith("--extension="):
            paths.append(word.partition("=")[2])
        elif word in _NO_EXTENSIONS:
            discover = False
    return [p for p in paths if not p.startswith("builtin:")], discover  # a built-in adds no flag


def plugin_files(cwd: str | None = None) -> bool:
    """Whether a plugin file would load: one in ``<agent dir>/extensions`` or
    ``.pi/extensions``, or a path settings.json lists under ``extensions`` (cheap:
    folder listings and the settings files; os.path, not pathlib, which a plain
    ``pi --help`` does not otherwise import)."""
    cwd = cwd or os.getcwd()
    home = os.path.expanduser(os.environ.get("PI_CODING_AGENT_DIR") or "~/.pi/agent")  # pi_core.paths
    project = os.path.join(cwd, ".pi")
    for folder in (os.path.join(home, "extensions"), os.path.join(project, "extensions")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if any(not n.startswith(("_", ".")) and
               (n.endswith(".py") or os.path.isfile(os.path.join(folder, n, "__init__.py")))
               for n in names):
            return True
    for settings in (os.path.join(home, "settings.json"), os.path.join(project, "settings.json")):
        try:
            with open(settings, encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        if '"extensions"' not in text:  # (json is not imported for a settings file without them)
            continue
        import json

        try:
            data = json.loads(text)
        except ValueError:
            continue
        entries = data.get("extensions") if isinstance(data, dict) else None
        if isinstance(entries, list) and any(  # a built-in's switch (-builtin:NAME) is no file
                isinstance(e, str) and not e.lstrip("+-").startswith("builtin:") for e in entries):
            return True
    return False


def plugin_flags(args: list[str]) -> list:
    """The flags the plugins that would load register, the built-in ones' included."""
    import asyncio

    from pi_core.app.discovery import load_plugins
    from pi_core.app.settings import Settings
    from pi_core.context import Context
    from pi_core.paths import agent_dir

    paths, discover = extension_args(args)
    cwd, home = os.getcwd(), agent_dir()
    settings = Settings.load(cwd, home)
    plugins = load_plugins(cwd=cwd, agent_dir=home, settings=settings, discover=discover,
                           extension_paths=paths)
    ctx = Context(cwd=cwd, plugins=plugins, settings=settings, agent_dir=home)
    return asyncio.run(plugins.call("register_flags", ctx=ctx))


def format_flags(flags: list, formatter) -> None:
    """A "Plugin flags" section in click's help layout."""
    rows = [(f"--{f.name}" + (" VALUE" if f.type == "string" else ""), f.description or "")
            for f in flags]
    if rows:
        with formatter.section("Plugin flags"):
            formatter.write_dl(rows)
