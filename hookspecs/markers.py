"""The pluggy markers for project ``pi``."""

import pluggy

PROJECT = "pi"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
