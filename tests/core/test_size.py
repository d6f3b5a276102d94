"""The core stays small (issue 35's floors): ``pi_core`` with its shell at most 9,000
lines, the core proper (``pi_core`` outside ``app/`` and ``testing/``) at most 6,000, and
no module of the core or of the built-in plugins over 600 lines. A feature that does
not fit goes into a plugin, not into the core."""

from pathlib import Path

ROOT = Path(__file__).parents[2]


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def modules(folder: str, *, leaving_out: tuple[str, ...] = ()) -> list[Path]:
    base = ROOT / folder
    return [p for p in base.rglob("*.py") if not set(leaving_out) & set(p.relative_to(base).parts[:-1])]


def test_the_core_with_its_shell_is_at_most_9000_lines():
    assert sum(lines(p) for p in modules("pi_core", leaving_out=("testing",))) <= 9000


def test_the_core_proper_is_at_most_6000_lines():
    assert sum(lines(p) for p in modules("pi_core", leaving_out=("testing", "app"))) <= 6000


def test_no_module_of_the_core_or_the_built_in_plugins_is_over_600_lines():
    found = {str(p.relative_to(ROOT)): lines(p) for p in [*modules("pi_core"), *modules("pi_plugins")]}
    assert {name: n for name, n in found.items() if n > 600} == {}
