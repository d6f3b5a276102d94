"""The built-in plugins of pi-harness, one module or package each.

:data:`pi_core.app.builtins.BUILTINS` lists them by name, in load order (the one list;
discovery reads it without importing this package).
"""
