"""Where the files recorded from the real pi live: ``tests/fixtures`` (see its README).

The one place tests find them; module-level parametrisation imports these constants and
everything else takes the root conftest's ``pi_fixtures`` fixture.
"""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSION_FIXTURES = FIXTURES / "sessions"
REQUEST_FIXTURES = FIXTURES / "requests"


def session_fixture_names() -> list[str]:
    return sorted(p.name for p in SESSION_FIXTURES.glob("*.jsonl"))
