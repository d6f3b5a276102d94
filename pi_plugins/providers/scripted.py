"""Moved to :mod:`pi_core.testing` (the test kit); this name stays until every import moves."""

from pi_core.testing.scripted import *  # noqa: F401,F403
from pi_core.testing.scripted import API, Reply, Script, ScriptedProvider, scripted_model  # noqa: F401
