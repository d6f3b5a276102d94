"""pi 1.6's footer and notices: the cache-hit rate (``CH``), cache-miss notices
(``showCacheMissNotices``), ``quietStartup: "header"``, and the resume hint printed when
the chat is quit."""

from __future__ import annotations

import re

import pytest

from support.llm_server import Reply


def test_the_footer_shows_the_last_answers_cache_hit_rate(pi_screen, server):
    server.push(Reply(text="From the cache.", usage={"input": 100, "output": 20, "cache_read": 900,
                                                     "cache_write": 0, "reasoning": 0}))
    term = pi_screen()
    term.submit("hello")
    screen = term.wait_drawn(lambda s: "From the cache." in s and "↑100" in s)
    stats = screen.rstrip().splitlines()[-1]
    assert re.match(r"↑100 ↓20 R900 CH90\.0% \$0\.\d{3} ", stats), stats


def test_a_cache_miss_is_noticed_when_show_cache_miss_notices_is_on(pi_screen, server):
    cached = {"input": 1000, "output": 10, "cache_read": 30000, "cache_write": 0, "reasoning": 0}
    missed = {"input": 31500, "output": 10, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    server.push(Reply(text="First, mostly cached.", usage=cached), Reply(text="Second, all re-billed.", usage=missed),
                Reply(text="Third, cached again.", usage=cached))
    term = pi_screen(settings={"showCacheMissNotices": True})
    term.submit("one")
    term.wait_drawn("First, mostly cached.")
    term.submit("two")
    term.wait_drawn("Second, all re-billed.")
    # 31k prompt tokens paid at $3 a million instead of the cache's $0.30
    screen = term.wait_drawn("Cache miss: 31k tokens re-billed (~$0.08)")
    term.submit("three")
    screen = term.wait_drawn("Third, cached again.")
    assert screen.count("Cache miss") == 1


def test_cache_misses_are_not_noticed_by_default(pi_screen, server):
    cached = {"input": 1000, "output": 10, "cache_read": 30000, "cache_write": 0, "reasoning": 0}
    missed = {"input": 31500, "output": 10, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    server.push(Reply(text="First.", usage=cached), Reply(text="Second.", usage=missed))
    term = pi_screen()
    term.submit("one")
    term.wait_drawn("First.")
    term.submit("two")
    screen = term.wait_drawn("Second.")
    assert "Cache miss" not in screen


def test_quiet_startup_header_keeps_the_header_but_not_what_was_loaded(pi_screen):
    skill = "---\nname: pdf-tools\ndescription: Work with PDF files\n---\nUse pdftotext.\n"
    term = pi_screen("--approve", settings={"quietStartup": "header"},
                     files={"AGENTS.md": "Be brief.\n", ".pi/skills/pdf-tools/SKILL.md": skill})
    screen = term.screen()
    assert "pi-harness v" in screen and "escape interrupt" in screen
    assert "[Context]" not in screen and "[Skills]" not in screen


@pytest.mark.process
def test_quitting_prints_how_to_resume_the_session(pi_tui, server):
    server.push(Reply(text="Noted."))
    term = pi_tui()
    term.submit("remember this")
    term.wait_for("Noted.")
    term.wait_idle()
    [session] = term.sessions()
    session_id = session.stem.split("_")[-1]
    term.submit("/quit")
    status, _ = term.wait_for_exit()
    assert status == 0
    after = term.screen(history=True).splitlines()
    where = after.index("To resume this session:")
    assert after[where + 1] == f"pi --session {session_id}"


@pytest.mark.process
def test_quitting_before_anything_was_said_prints_no_resume_hint(pi_tui):
    term = pi_tui()
    term.submit("/quit")
    status, _ = term.wait_for_exit()
    assert status == 0 and "To resume this session" not in term.screen(history=True)
