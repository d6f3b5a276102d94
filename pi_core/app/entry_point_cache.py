"""The ``pi.plugins`` entry points of the installed distributions, kept between runs of
``pi`` until a distribution is installed, removed or edited.

Asking importlib.metadata costs about 12 ms of every start: importing it, reading every
distribution's entry points and pi-harness's own METADATA (its README included). What it
answers only changes with the distributions, so the console script (which sets
:data:`FOLDER`) keeps the answer with a fingerprint of them: ``sys.path``, and in each of
its folders the ``*.dist-info`` / ``*.egg-info`` entries with the size and time of their
``entry_points.txt`` and metadata. Any difference asks importlib.metadata again. Where
distributions could hide from the fingerprint (a zip or an egg on ``sys.path``, an import
hook that finds distributions), it is asked every time.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable  # (typing costs pi --help 2 ms)

#: Where the console script keeps the cache; None (the default, for the SDK and tests):
#: importlib.metadata is asked every time.
FOLDER: str | None = None

_INFO = (".dist-info", ".egg-info")
#: Answers kept, by fingerprint: environments and ways of starting take turns
#: (``python -m`` puts the working directory on ``sys.path``, the console script its own).
KEEP = 8


def entry_points(find: Callable[[], list[tuple]]) -> list[tuple]:
    """What ``find()`` returns (tuples of strings), from the cache while the
    distributions have not changed."""
    stamp = fingerprint() if FOLDER is not None else None
    if stamp is None:
        return find()
    path = os.path.join(FOLDER, f"entry-points-{sys.hexversion:x}.marshal")
    known: dict = {}
    try:
        with open(path, "rb") as f:
            known = marshal.loads(f.read())
        rows = known.get(stamp)
        if isinstance(rows, list):
            return rows
    except (OSError, EOFError, ValueError, TypeError, AttributeError):
        known = {}
    rows = find()
    known.pop(stamp, None)
    known[stamp] = rows  # the newest last; the oldest go past KEEP
    try:
        data = marshal.dumps(dict(list(known.items())[-KEEP:]))
    except ValueError:  # not marshallable: nothing to keep
        return rows
    from pi_core.app.cache_folder import write_file

    write_file(path, data)
    return rows


def fingerprint() -> tuple | None:
    """What importlib.metadata's answer depends on, or None where that cannot be told
    cheaply."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return None
    parts: list = [tuple(sys.path)]
    for root in sys.path:
        folder = root or "."
        if os.path.basename(folder).lower().endswith(".egg"):
            return None
        try:
            children = sorted(os.listdir(folder))
        except NotADirectoryError:
            return None  # a zip file: its distributions are not fingerprinted
        except OSError:
            parts.append(None)
            continue
        for child in children:
            if child.lower().endswith(_INFO):
                info = os.path.join(folder, child)
                facts = [child, _stat(info), _stat(os.path.join(info, "entry_points.txt"))]
                if facts[2] is not None:  # whose name and version discovery reads
                    facts += [_stat(os.path.join(info, "METADATA")),
                              _stat(os.path.join(info, "PKG-INFO"))]
                parts.append(tuple(facts))
        parts.append(folder)
    return tuple(parts)


def _stat(path: str) -> tuple | None:
    try:
        facts = os.stat(path)
    except OSError:
        return None
    return facts.st_mode, facts.st_size, facts.st_mtime_ns
