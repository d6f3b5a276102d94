"""pi 1.6's custom update command for ``pi update`` (self): ``PI_SELF_UPDATE_COMMAND``
(split on whitespace) or, under it, the agent directory's ``selfUpdateCommand`` (an argv
list), run instead of pip when a newer release is out, with ``{packageName}``,
``{version}`` and ``{installSpec}`` (``{packageName}@{version}``) filled in. For when a
wrapper or another package manager provides pi-harness (pipx, uv tool, nix)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

PACKAGE = "pi-harness"


class SelfUpdateError(Exception):
    """The command is malformed, or the newest release cannot be learnt; said as is."""


def custom_command(agent_dir: Path, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The configured command (the variable first, as pi 1.6), or None."""
    env = os.environ if env is None else env
    text = env.get("PI_SELF_UPDATE_COMMAND", "").strip()
    if text:
        return text.split()
    path = agent_dir / "settings.json"  # only the user's settings may name a command to run
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SelfUpdateError(f"cannot read {path}: {exc}") from None
    value = data.get("selfUpdateCommand") if isinstance(data, dict) else None
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
        raise SelfUpdateError(f'{path}: "selfUpdateCommand" must be a non-empty list of strings '
                              '(the command and its arguments)')
    return list(value)


def newest_version(pip: Callable[..., subprocess.CompletedProcess], pip_args: list[str]) -> str:
    """The newest release pip's index has (``pip index versions``, honouring --index-url,
    --find-links and the like)."""
    proc = pip("index", "versions", PACKAGE, *pip_args)
    match = re.search(rf"^{re.escape(PACKAGE)} \(([^)]+)\)", proc.stdout, re.M)
    if proc.returncode != 0 or match is None:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise SelfUpdateError(f"cannot learn the newest {PACKAGE} release from pip's index"
                              + (f": {detail[-1]}" if detail else ""))
    return match.group(1)


def _newer(candidate: str, installed: str) -> bool:
    """By the release numbers (``1.10.0`` > ``1.9.2``); a pre-release suffix is not weighed."""
    def numbers(version: str) -> tuple[int, ...]:
        head = re.match(r"[\d.]+", version)
        return tuple(int(n) for n in head.group(0).split(".") if n) if head else ()

    return numbers(candidate) > numbers(installed) if numbers(candidate) and numbers(installed) \
        else candidate != installed


def run_custom(command: list[str], installed: str, pip: Callable[..., subprocess.CompletedProcess],
               pip_args: list[str], force: bool, say: Callable[..., None]) -> int:
    """Run ``command`` when the index has a newer release (or ``force``); the exit code."""
    try:
        version = newest_version(pip, pip_args)
    except SelfUpdateError as exc:
        say(f"error: {exc}", err=True)
        return 1
    if not force and not _newer(version, installed):
        say(f"{PACKAGE} {installed} is up to date")
        return 0
    fields = {"{packageName}": PACKAGE, "{version}": version, "{installSpec}": f"{PACKAGE}@{version}"}
    argv = []
    for arg in command:
        for placeholder, value in fields.items():
            arg = arg.replace(placeholder, value)
        argv.append(arg)
    say(f"Updating {PACKAGE} {installed} -> {version}: {' '.join(argv)}")
    try:
        done = subprocess.run(argv)
    except OSError as exc:
        say(f"error: the update command {argv[0]!r} could not run: {exc.strerror or exc}", err=True)
        return 1
    if done.returncode != 0:
        say(f"error: the update command exited with {done.returncode}", err=True)
        return 1
    return 0
