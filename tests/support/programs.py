"""Requirements of this suite that are not programs on PATH: the real pi 0.73.1 and the
pi-acp adapter (node and their npm packages, which .ci/run installs), as ``requires``
names ``"pi"`` and ``"pi-acp"``. The rest is the test kit's (:mod:`pi_core.testing.programs`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pi_core.testing.programs import REQUIREMENTS, missing, require, require_program, under_ci  # noqa: F401

REAL_PI = Path(os.environ.get("PI_PACKAGE", "/tmp/pi/node_modules/@mariozechner/pi-coding-agent"))
PI_ACP = Path(os.environ.get("PI_ACP_PACKAGE", "/tmp/pi-acp/node_modules/pi-acp"))
_PACKAGES = {"pi": REAL_PI, "pi-acp": PI_ACP}


def real_available(name: str) -> bool:
    return shutil.which("node") is not None and (_PACKAGES[name] / "package.json").exists()


def require_real(name: str) -> Path:
    """The npm package folder of the real ``pi`` or of ``pi-acp``; skips (fails under CI) without it."""
    require(real_available(name), f"node and the npm package of {name}")
    return _PACKAGES[name]


for _name in _PACKAGES:
    REQUIREMENTS[_name] = lambda name=_name: real_available(name)
