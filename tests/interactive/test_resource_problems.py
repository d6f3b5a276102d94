"""Skill and prompt-template problems in the chat, as pi 0.73.1 lists them at start-up
(``[Skill conflicts]``, ``[Prompt conflicts]``) and again after ``/reload``."""

from __future__ import annotations

NO_DESCRIPTION = "---\nname: nodesc\n---\nbody\n"
WRONG_NAME = "---\nname: other-name\ndescription: does a thing\n---\nbody\n"
LONG_DESCRIPTION = "---\nname: longdesc\ndescription: " + "x" * 1100 + "\n---\nbody\n"


def _section(screen: str, heading: str) -> list[str]:
    lines = [line.strip() for line in screen.splitlines()]
    start = lines.index(heading) + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def test_skill_problems_are_listed_under_skill_conflicts_at_start_up(pi_screen):
    term = pi_screen("--approve", files={".pi/skills/nodesc/SKILL.md": NO_DESCRIPTION,
                                         ".pi/skills/wrongname/SKILL.md": WRONG_NAME,
                                         ".pi/skills/longdesc/SKILL.md": LONG_DESCRIPTION})
    screen = term.wait_for("[Skill conflicts]")
    assert _section(screen, "[Skills]") == ["longdesc, other-name"]
    assert _section(screen, "[Skill conflicts]") == [
        "auto (project) ~/project/.pi/skills/longdesc/SKILL.md",
        "description exceeds 1024 characters (1100)",
        "~/project/.pi/skills/nodesc/SKILL.md",
        "description is required",
        "auto (project) ~/project/.pi/skills/wrongname/SKILL.md",
        'name "other-name" does not match parent directory "wrongname"',
    ]


def test_a_name_collision_names_the_kept_file_and_the_skipped_one(pi_screen):
    template = "---\ndescription: Review\n---\nReview the code.\n"
    term = pi_screen("--approve", files={".pi/prompts/review.md": template},
                     agent_files={"prompts/review.md": template})
    screen = term.wait_for("[Prompt conflicts]")
    assert _section(screen, "[Prompt conflicts]") == [
        '"/review" collision:',
        "✓ auto (project) ~/project/.pi/prompts/review.md",
        "✗ ~/agent/prompts/review.md (skipped)",
    ]


def test_reload_lists_the_problems_again_and_a_quiet_start_still_shows_them(pi_screen):
    term = pi_screen("--approve", settings={"quietStartup": True},
                     files={".pi/skills/nodesc/SKILL.md": NO_DESCRIPTION})
    screen = term.wait_for("[Skill conflicts]")
    assert "pi-harness v" not in screen
    (term.cwd / ".pi/skills/wrongname").mkdir()
    (term.cwd / ".pi/skills/wrongname/SKILL.md").write_text(WRONG_NAME)
    term.submit("/reload")
    screen = term.wait_drawn("parent directory")
    after = screen[screen.index("Reloaded plugins"):]
    assert _section(after, "[Skill conflicts]") == [
        "~/project/.pi/skills/nodesc/SKILL.md",
        "description is required",
        "auto (project) ~/project/.pi/skills/wrongname/SKILL.md",
        'name "other-name" does not match parent directory "wrongname"',
    ]
    assert "skills: " not in after  # not told twice (as a notification too)
