"""The built-in plugins of pi-harness, each registered as a ``pi.plugins`` entry point.

``LOAD_ORDER`` (kept in :mod:`pi_core.app.builtins`, so discovery needs no import of this
package) is the one list of the built-ins and their order; pyproject.toml declares
the same entry points in the same order (a test keeps them equal). setuptools writes
entry points sorted by name, so the order is lost on install: discovery loads the
built-ins in this order (any not listed come after, by name, with a warning).
"""

from pi_core.app.builtins import LOAD_ORDER  # noqa: E402,F401  (the one list)
