"""The built-in plugins of pi-harness, each registered as a ``pi.plugins`` entry point."""
