"""Saving a project trust decision for a test, as ``/trust`` does: a project's
``.pi/settings.json``, ``mcp.json`` or extensions load only once it is trusted."""

from __future__ import annotations

import os


def trust_project(agent_dir: str | os.PathLike, cwd: str | os.PathLike, trusted: bool = True) -> None:
    """Save ``trusted`` for ``cwd`` in ``agent_dir``'s trust.json (the built-in ``trust``
    plugin's store, which pi 1.6 reads too)."""
    from pi_plugins.trust.policy import TrustStore

    TrustStore(agent_dir).set(cwd, trusted)
