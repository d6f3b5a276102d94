"""The HTTP transport's first import (httpcore, h11, the CA bundle's modules) makes what
lives as long as the process: no collection walks it meanwhile, and it is frozen then."""

import subprocess
import sys

import pytest

PROBE = ("import gc; seen = []\n"
         "gc.callbacks.append(lambda phase, info: seen.append(info) if phase == 'start' else None)\n"
         "from pi_plugins.providers.pool import transport\n"
         "before, frozen = len(seen), gc.get_freeze_count(); transport()\n"
         "print(len(seen) - before, gc.get_freeze_count() > frozen, gc.isenabled(), 'httpcore' in sys.modules)")


@pytest.mark.process
def test_the_transports_first_import_runs_no_collection_and_is_frozen_then():
    done = subprocess.run([sys.executable, "-c", "import sys\n" + PROBE], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True", "True", "True"]
