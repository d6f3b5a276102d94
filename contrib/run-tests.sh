#!/usr/bin/env bash
# Install each contrib package into a temporary venv of its own, from its own directory,
# and run its tests there. Ends with "packages: N passed, M failed"; exits non-zero when
# any package fails to install or to pass.
#
# Each venv sees the calling Python's packages (pi-harness, pytest, pip) through a .pth
# file placed after its own site-packages, as tests/support/wheels.py make_venv does: a
# venv made from inside another venv is built on the base interpreter, so
# --system-site-packages alone would not show pi-harness. The package is installed with
# --no-build-isolation --no-index, so pi-harness must come from the calling environment
# (never from an index); its other dependencies are installed from the
# index first.
#
#   bash contrib/run-tests.sh [PACKAGE_DIR...]      # default: every contrib/*/pyproject.toml
#   PYTHON=/path/to/python bash contrib/run-tests.sh
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/pi-contrib.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if [ "$#" -gt 0 ]; then
    packages=("$@")
else
    packages=()
    for dir in "$here"/*/; do
        [ -f "$dir/pyproject.toml" ] && packages+=("${dir%/}")
    done
fi

# --no-build-isolation builds with the setuptools the venvs see; setuptools before 70.1
# also needs the wheel package. When the calling environment lacks them, they go into a
# folder of this run's own, never into the calling environment.
build_tools=""
if ! "$python" -c "import setuptools.command.bdist_wheel" 2>/dev/null \
        && ! "$python" -c "import setuptools, wheel.bdist_wheel" 2>/dev/null; then
    echo "== fetching setuptools to build the packages without isolation"
    build_tools="$work/build-tools"
    "$python" -m pip install -q --disable-pip-version-check --target "$build_tools" "setuptools>=70.1" || exit 1
fi

# The folders each venv adds after its own site-packages: the build tools, then every
# site-packages folder of the calling Python.
outer_sites="$("$python" -c '
import site, sys
from pathlib import Path
found = [sys.argv[1]] if sys.argv[1] else []
found += [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
found += [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and p not in found]
print("\n".join(found))' "$build_tools")"

make_venv() {  # make_venv DIR -> prints its python
    "$python" -m venv --without-pip "$1" >/dev/null || return 1
    local inner="$1/bin/python" own
    own="$("$inner" -c 'import site; print(site.getsitepackages()[0])')" || return 1
    while IFS= read -r site_dir; do
        [ -n "$site_dir" ] && printf 'import site; site.addsitedir(%s)\n' "$(printf '%s' "$site_dir" | "$python" -c 'import sys; print(repr(sys.stdin.read()))')"
    done <<<"$outer_sites" >"$own/_pi_outer_env.pth"
    echo "$inner"
}

extra_deps() {  # the package's dependencies other than pi-harness, one a line
    "$python" - "$1/pyproject.toml" <<'EOF'
import re, sys, tomllib
with open(sys.argv[1], "rb") as f:
    deps = tomllib.load(f)["project"].get("dependencies", [])
for dep in deps:
    name = re.split(r"[\s<>=!~;\[]", dep, maxsplit=1)[0]
    if name.lower().replace("_", "-") != "pi-harness":
        print(dep)
EOF
}

passed=0
failed=0
failures=()
for pkg in "${packages[@]}"; do
    pkg="$(cd "$pkg" && pwd)"
    name="$(basename "$pkg")"
    echo "== $name"
    start=$SECONDS
    ok=1
    # Build from a copy, so the build leaves nothing (build/, *.egg-info) in the tree.
    copy="$work/src/$name"
    mkdir -p "$copy"
    (cd "$pkg" && tar --exclude='*.egg-info' --exclude=build --exclude=__pycache__ \
        --exclude=.pytest_cache -cf - .) | (cd "$copy" && tar -xf -) || ok=0
    inner="$( [ $ok = 1 ] && make_venv "$work/venv/$name")" || ok=0
    if [ $ok = 1 ]; then
        mapfile -t deps < <(extra_deps "$copy")
        if [ "${#deps[@]}" -gt 0 ]; then
            echo "   dependencies: ${deps[*]}"
            "$inner" -m pip install -q --disable-pip-version-check "${deps[@]}" || ok=0
        fi
    fi
    if [ $ok = 1 ]; then
        "$inner" -m pip install -q --disable-pip-version-check --no-build-isolation --no-index "$copy" || ok=0
    fi
    if [ $ok = 1 ]; then
        (cd "$copy" && timeout 900 "$inner" -m pytest -q -p no:cacheprovider tests) || ok=0
    fi
    if [ $ok = 1 ]; then
        passed=$((passed + 1))
        echo "== $name passed ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "== $name FAILED ($((SECONDS - start)) s)"
    fi
done

[ "$failed" -gt 0 ] && echo "failed packages: ${failures[*]}"
echo "packages: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
