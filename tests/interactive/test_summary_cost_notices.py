"""pi 1.6's summary cost notices (``showCacheMissNotices``): under a compaction or branch
summary, ``Compaction: 12k tokens billed`` (``Branch summary: …``), what the summary's own
requests cost, from the usage its entry recorded; again when the session is opened."""

from pi_plugins.interactive.cache_notices import cache_warming_notice
from support.llm_server import Reply

NOTICES = {"showCacheMissNotices": True, "compaction": {"keepRecentTokens": 3}}


def _compact(term) -> str:
    term.submit("question one")
    term.wait_for("Answer one.")
    term.submit("question two")
    term.wait_for("Two.")
    term.wait_idle()
    term.submit("/compact")
    return term.wait_for(lambda s: s.count("[compaction]") == 2)


def _replies(server) -> None:
    server.push(Reply(text="Answer one. " * 20), Reply(text="Two."),
                Reply(text="## Goal\nShort answers.", usage={"input": 11_500, "output": 500}))


def test_a_compaction_shows_what_its_summary_billed_under_it(pi_screen, server):
    _replies(server)
    term = pi_screen(settings=NOTICES)
    _compact(term)
    screen = term.wait_for("Compaction: 12k tokens billed")
    assert screen.count("Compaction: 12k tokens billed") == 1
    assert screen.rindex("Compaction: 12k tokens billed") > screen.rindex("[compaction]")


def test_no_summary_cost_notice_unless_asked_for(pi_screen, server):
    _replies(server)
    term = pi_screen(settings={"compaction": {"keepRecentTokens": 3}})
    screen = _compact(term)
    term.wait_idle()
    assert "tokens billed" not in screen


def test_an_opened_session_shows_the_summarys_cost_after_it(pi_screen, server):
    _replies(server)
    term = pi_screen(settings=NOTICES)
    _compact(term)
    term.wait_for("Compaction: 12k tokens billed")
    term.close()
    again = pi_screen("--continue", settings=NOTICES)
    screen = again.wait_for("Compaction: 12k tokens billed")
    assert screen.index("[compaction]") < screen.index("Compaction: 12k tokens billed")


def test_a_branch_summary_shows_what_it_billed(pi_screen, server):
    server.push(Reply(text="First answer."), Reply(text="Second answer."),
                Reply(text="The user asked twice.", usage={"input": 2_000, "output": 100}))
    term = pi_screen(settings={"showCacheMissNotices": True})
    term.submit("first question")
    term.wait_for("First answer.")
    term.submit("second question")
    term.wait_for("Second answer.")
    term.wait_idle()
    term.submit("/tree")
    term.wait_for("Session tree")
    term.press("Up")
    term.wait_for("→ • user: second question")
    term.press("Enter")
    term.wait_for("Summarize the branch you leave?")
    term.press("Down")
    term.wait_for("→ Summarize")
    term.press("Enter")
    screen = term.wait_for("Branch summary: 2.1k tokens billed")
    assert screen.index("[branch]") < screen.index("Branch summary: 2.1k tokens billed")


def test_the_cache_warming_notice_reads_as_pi_16_writes_it():
    """1.6's formatCacheWarmingUsage: at least three decimals, trailing zeros dropped past them."""
    assert cache_warming_notice(0.0123, "idle") == "Cache warmed (idle): $0.0123"
    assert cache_warming_notice(0.5, None) == "Cache warmed: $0.500"
    assert cache_warming_notice(1.23456789, None) == "Cache warmed: $1.234568"
