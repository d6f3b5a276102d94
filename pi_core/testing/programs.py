"""Programs a test needs (a terminal, a browser, bubblewrap, node…): where one is absent
its tests skip with a reason, except under CI (``CI=true``), where a missing program is
an error, so that a CI run can never pass by skipping what it was meant to test.

``@pytest.mark.requires("bwrap", "rg")`` says so declaratively (the kit's pytest plugin
reads it); :func:`require_program` and :func:`require` do it inside a test or fixture.
A test suite can name requirements that are not programs on ``PATH`` by adding a check
to :data:`REQUIREMENTS` (name → function returning whether it is met).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import NoReturn

#: Requirements that are not a program on PATH: name → "is it there?".
REQUIREMENTS: dict[str, Callable[[], bool]] = {}


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(what: str) -> NoReturn:
    """Skip the current test for lack of ``what``, or fail it under CI."""
    import pytest  # only here: the rest of the kit works where pytest is not installed

    message = f"{what} is not available here"
    if under_ci():
        pytest.fail(f"{message}, and under CI every program the tests need must be installed",
                    pytrace=False)
    pytest.skip(message)


def require_program(name: str, why: str = "") -> str:
    """The path of the program ``name``; skips (fails under CI) where it is absent."""
    found = shutil.which(name)
    if found is None:
        missing(f"{name}{f' ({why})' if why else ''}")
    return found


def require(available: bool, what: str) -> None:
    """Skip (fail under CI) unless ``available``: a requirement that is not one program."""
    if not available:
        missing(what)


def check_requirement(name: str) -> None:
    """One name of a ``requires`` mark: a registered requirement, else a program."""
    check = REQUIREMENTS.get(name)
    if check is None:
        require_program(name)
    else:
        require(check(), name)
