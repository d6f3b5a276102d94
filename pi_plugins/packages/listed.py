"""Whether the settings name any pi package (``packages`` in either scope, or an ``-e``
package source): most runs name none, and then neither the installer nor the package
resources' collection is loaded (sources, semver and the registry client are ~10 ms)."""

from __future__ import annotations

from typing import Any


def lists_packages(settings: Any) -> bool:
    """True also for a malformed ``packages`` value, which the collection reports."""
    if getattr(settings, "extension_sources", None):
        return True
    scopes = (getattr(settings, "global_data", None), getattr(settings, "project_data", None))
    return any(isinstance(data, dict) and data.get("packages") is not None for data in scopes)
