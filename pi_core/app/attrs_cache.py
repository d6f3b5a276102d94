"""The methods attrs writes for each class (``__init__``, ``__eq__``, ``__repr__``...),
compiled once and kept between runs of ``pi``.

attrs generates those methods as Python source and compiles it as each class is
defined: about a quarter of a millisecond a class, and ``pi -p`` defines some 150 (a
tenth of its start-up). The same source always compiles to the same code, so the console
script keeps the code (``marshal``, as Python keeps ``.pyc`` files) in one file of its
cache folder, keyed on the source and the file name attrs gives it, for this Python only;
each entry is loaded when its class is defined. A class whose source changed (an edit,
another attrs) compiles as before, and the file is rewritten at exit. A generated
``__hash__`` holds the hash of a string, which differs from run to run
(``PYTHONHASHSEED``): the cached code reads that number from the class's globals instead.

It wraps one private function of attrs (``attr._make._compile_and_eval``); where that is
missing or takes other arguments, nothing is cached and attrs works as ever.
"""

from __future__ import annotations  # as in attr._make: compile() inherits these flags

import __future__
import atexit
import marshal
import os
import re
import sys
from types import CodeType

#: Entries kept at most (pi has some 250 classes; edits add more): past it only those this
#: run used are written, so the file stays small to read.
LIMIT = 1000

#: The number attrs' ``__hash__`` starts its tuple with (``hash((\n        NUMBER,``).
_TYPE_HASH = re.compile(r"(hash\(\(\n *)(-?\d+),$", re.M)
_HASH_NAME = "_attrs_cache_type_hash"
_FUTURE = 0
for _name in __future__.all_feature_names:
    _FUTURE |= getattr(__future__, _name).compiler_flag


def install(directory: str | None) -> None:
    """Serve attrs' compiles from the cache in ``directory``, from the moment attrs is
    imported (its own validators and converters are attrs classes too)."""
    if directory is None:
        return
    make = sys.modules.get("attr._make")
    if make is not None:
        _patch(make, directory)
    else:
        sys.meta_path.insert(0, _WhenImported(directory))


class _WhenImported:
    """An import hook that patches ``attr._make`` as soon as it has run, before the rest
    of attrs defines its classes."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def find_spec(self, name, path=None, target=None):
        if name != "attr._make":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None) if finder is not self else None
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        exec_module = getattr(spec.loader, "exec_module", None)
        if exec_module is not None:
            def exec_and_patch(module) -> None:
                if self in sys.meta_path:
                    sys.meta_path.remove(self)
                exec_module(module)
                _patch(module, self.directory)

            spec.loader.exec_module = exec_and_patch
        return spec


def _patch(make, directory: str) -> None:
    original = getattr(make, "_compile_and_eval", None)
    code = getattr(original, "__code__", None)
    if code is None or code.co_varnames[:4] != ("script", "globs", "locs", "filename") \
            or (code.co_flags ^ _patch.__code__.co_flags) & _FUTURE:
        return
    path = os.path.join(directory, f"attrs-{sys.implementation.cache_tag}-{sys.hexversion:x}"
                                   f"-O{sys.flags.optimize}.marshal")
    known: dict = {}
    try:
        with open(path, "rb") as f:
            loaded = marshal.loads(f.read())  # load(f) reads in small pieces: 5x slower
        if isinstance(loaded, dict):
            known = loaded
    except (OSError, EOFError, ValueError, TypeError):
        pass
    used: dict = {}
    compiled: list = []

    def compile_and_eval(script, globs, locs=None, filename=""):
        numbers = _TYPE_HASH.findall(script) if "def __hash__(" in script else ()
        if numbers:  # the hash of a string, which changes from run to run
            if len(numbers) > 1 or not isinstance(globs, dict):
                return original(script, globs, locs, filename)
            script = _TYPE_HASH.sub(rf"\g<1>{_HASH_NAME},", script)
            globs[_HASH_NAME] = int(numbers[0][1])
        key = (filename, script)
        data = known.get(key)
        try:
            bytecode = marshal.loads(data) if type(data) is bytes else None
        except (EOFError, ValueError, TypeError):
            bytecode = None
        if type(bytecode) is not CodeType:  # not cached (or a damaged file)
            bytecode = compile(script, filename, "exec")
            compiled.append(key)
            data = marshal.dumps(bytecode)
        used[key] = data
        eval(bytecode, globs, locs)

    def save() -> None:
        if not compiled:
            return
        from pi_core.app.cache_folder import write_file

        kept = {**known, **used} if len(known) + len(compiled) <= LIMIT else used
        write_file(path, marshal.dumps(kept))

    make._compile_and_eval = compile_and_eval
    atexit.register(save)
