"""Programs some tests need (tmux, chromium, ripgrep, bubblewrap, node and the real pi).

Where one is absent its tests skip with a reason, except under CI (``CI=true``): ``.ci/run``
installs them all, so there a missing program is an error and CI can never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


# The real pi 0.73.1 and the pi-acp adapter, installed from npm by .ci/run (see there).
REAL_PI = Path(os.environ.get("PI_PACKAGE", "/tmp/pi/node_modules/@mariozechner/pi-coding-agent"))
PI_ACP = Path(os.environ.get("PI_ACP_PACKAGE", "/tmp/pi-acp/node_modules/pi-acp"))


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(what: str) -> None:
    """Skip the current test for lack of ``what``, or fail it under CI."""
    message = f"{what} is not available here"
    if under_ci():
        pytest.fail(f"{message}, and under CI every program the tests need must be installed "
                    "(.ci/run installs them)", pytrace=False)
    pytest.skip(message)


def require_program(name: str, why: str = "") -> str:
    """The path of the program ``name``; skips (fails under CI) where it is absent."""
    found = shutil.which(name)
    if found is None:
        missing(f"{name}{f' ({why})' if why else ''}")
    return found


def require(available: bool, what: str) -> None:
    """Skip (fail under CI) unless ``available``: for a requirement that is not a single program."""
    if not available:
        missing(what)


def real_available(name: str) -> bool:
    package = {"pi": REAL_PI, "pi-acp": PI_ACP}[name]
    return shutil.which("node") is not None and (package / "package.json").exists()


def require_real(name: str) -> Path:
    """The npm package folder of the real ``pi`` or of ``pi-acp``; skips (fails under CI) without it."""
    require(real_available(name), f"node and the npm package of {name}")
    return {"pi": REAL_PI, "pi-acp": PI_ACP}[name]
