"""``@pytest.mark.requires("bwrap")``: skip where the program is missing, except under
CI=true, where a missing program is a failure (CI installs bubblewrap)."""

import os
import shutil

import pytest


def pytest_runtest_setup(item):
    for mark in item.iter_markers("requires"):
        missing = [name for name in mark.args if shutil.which(name) is None]
        if missing:
            message = f"needs {', '.join(missing)} on PATH"
            if os.environ.get("CI") == "true":
                pytest.fail(f"{message} (CI installs it: .ci/run)")
            pytest.skip(message)
