"""Values in ``env`` and ``headers`` as pi 1.6 resolves them: ``!command`` (the whole
value) is the command's trimmed output; otherwise ``$NAME`` and ``${NAME}`` are
environment variables, ``$$`` is ``$`` and ``$!`` is ``!``. A variable that is not set,
or a command that fails, is an error naming it, so a server never starts with a blank key.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UnresolvedValue(Exception):
    """A value could not be resolved; the message says which and why."""


def _missing(value: str, env: Mapping[str, str]) -> list[str]:
    missing: list[str] = []
    for match in re.finditer(r"\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))", value.replace("$$", "")):
        name = match.group(1) if match.group(1) is not None else match.group(2)
        if _NAME.fullmatch(name or "") and not env.get(name) and name not in missing:
            missing.append(name)
    return missing


def _template(value: str, env: Mapping[str, str]) -> str | None:
    out, i = [], 0
    while i < len(value):
        char = value[i]
        if char != "$":
            out.append(char)
            i += 1
            continue
        nxt = value[i + 1:i + 2]
        if nxt in ("$", "!"):
            out.append(nxt)
            i += 2
        elif nxt == "{" and (end := value.find("}", i + 2)) >= 0:
            name = value[i + 2:end]
            if _NAME.fullmatch(name):
                if not env.get(name):
                    return None
                out.append(env[name])
            else:
                out.append(value[i:end + 1])
            i = end + 1
        elif found := _NAME.match(value, i + 1):
            if not env.get(found.group()):
                return None
            out.append(env[found.group()])
            i = found.end()
        else:
            out.append("$")
            i += 1
    return "".join(out)


def resolve(value: str, what: str, env: Mapping[str, str] | None = None) -> str:
    """``value`` resolved; raises :class:`UnresolvedValue` in pi 1.6's words (``what`` names
    the field: ``MCP server "docs" env "TOKEN"``)."""
    env = os.environ if env is None else env
    if value.startswith("!"):
        try:
            done = subprocess.run(value[1:], shell=True, capture_output=True, text=True, timeout=10)
            output = done.stdout.strip() if done.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            output = ""
        if not output:
            raise UnresolvedValue(f"Failed to resolve {what} from shell command: {value[1:]}")
        return output
    resolved = _template(value, env)
    if resolved is not None:
        return resolved
    missing = _missing(value, env)
    plural = "s" if len(missing) > 1 else ""
    raise UnresolvedValue(f"Failed to resolve {what} from environment variable{plural}: {', '.join(missing)}")
