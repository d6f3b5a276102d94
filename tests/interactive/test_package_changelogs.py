"""pi 1.6's "Extension Updates": after a pi package that carries an extension is updated,
the next fresh start shows its changelog entries newer than the version last shown (one
line per package with ``collapseChangelog``); a package seen for the first time is only
recorded."""

from __future__ import annotations

import json

KEY = json.dumps({"source": "npm:pi-demo", "scope": "user"}, separators=(",", ":"))
CHANGELOG = ("# Changelog\n\n## [Unreleased]\n\n- not yet\n\n## [1.2.0] - 2026-11-02\n\n- Added the frobnicator.\n\n"
             "## [1.1.0] - 2026-10-01\n\n- Fixed the widget.\n\n## [1.0.0] - 2026-09-01\n\n- First release.\n")


def _package(version="1.2.0", changelog_path=None, extension=True) -> dict[str, str]:
    pi: dict = {"skills": ["./skills"]}
    if extension:
        pi["extensions"] = ["./index.ts"]
    if changelog_path is not None:
        pi["changelogPath"] = changelog_path
    root = "npm/node_modules/pi-demo/"
    return {root + "package.json": json.dumps({"name": "pi-demo", "version": version, "pi": pi}),
            root + "index.ts": "export default function () {}\n", root + "CHANGELOG.md": CHANGELOG,
            root + "skills/demo/SKILL.md": "---\nname: demo\ndescription: A demo.\n---\nDo it.\n"}


def _kept(term) -> dict:
    return json.loads((term.agent_dir / "settings.json").read_text()).get("extensionChangelogVersions", {})


def test_a_package_update_shows_the_new_entries_under_extension_updates_once(pi_screen):
    term = pi_screen(settings={"packages": ["npm:pi-demo"], "lastChangelogVersion": "0.1.0",
                               "extensionChangelogVersions": {KEY: "1.0.0"}}, agent_files=_package())
    screen = term.wait_for("Extension Updates")
    assert "pi-demo [1.2.0]" in screen and "Added the frobnicator." in screen and "Fixed the widget." in screen
    assert "First release." not in screen and "not yet" not in screen
    assert _kept(term) == {KEY: "1.2.0"}


def test_collapse_changelog_says_one_line_per_package(pi_screen):
    term = pi_screen(settings={"packages": ["npm:pi-demo"], "lastChangelogVersion": "0.1.0", "collapseChangelog": True,
                               "extensionChangelogVersions": {KEY: "1.1.0"}}, agent_files=_package())
    screen = term.wait_for("Updated pi-demo to v1.2.0.")
    assert "Extension Updates" not in screen and "frobnicator" not in screen


def test_a_new_package_is_recorded_and_no_extension_or_no_changelog_shows_nothing(pi_screen):
    term = pi_screen(settings={"packages": ["npm:pi-demo"], "lastChangelogVersion": "0.1.0"}, agent_files=_package())
    assert "Extension Updates" not in term.screen() and _kept(term) == {KEY: "1.2.0"}
    term.close()
    for files in (_package(extension=False), _package(changelog_path="")):
        quiet = pi_screen(settings={"packages": ["npm:pi-demo"], "lastChangelogVersion": "0.1.0",
                                    "extensionChangelogVersions": {KEY: "1.0.0"}}, agent_files=files)
        assert "Extension Updates" not in quiet.screen() and _kept(quiet) == {KEY: "1.0.0"}
        quiet.close()
