"""The ``pi`` command line, as pi's ``main.ts`` and ``src/cli/`` sit outside its core:
the console script (:mod:`.entry`, which answers ``--help`` and ``--version`` without
importing click), the click commands (:mod:`.main`) and what ``pi`` does between its
flags and a mode (:mod:`.wiring`). The modes it runs are plugins (``register_modes``).

Not a hook plugin: it is not among the built-ins, so ``-builtin:NAME`` cannot drop the
command line itself. Importing this package loads nothing (``pi --version`` counts on it).
"""
