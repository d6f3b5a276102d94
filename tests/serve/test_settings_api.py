"""The settings view's HTTP side: where defaults are saved (the user's settings.json or a
trusted project's .pi/settings.json), and bad input refused with nothing lost."""

from __future__ import annotations

import json


def test_a_settings_file_that_is_not_json_is_refused_and_left_as_it_is(served, pi):
    broken = '{"theme": "dark", oops'
    (pi.agent_dir / "settings.json").write_text(broken)
    refused = served.http.put("/api/settings", json={"defaultThinkingLevel": "high"})
    assert refused.status_code == 409
    assert "is not valid JSON" in refused.json()["error"] and "left as is" in refused.json()["error"]
    assert (pi.agent_dir / "settings.json").read_text() == broken
    assert served.http.put("/api/settings", json={"scope": "everywhere"}).status_code == 400
    assert served.http.get("/api/settings", params={"cwd": "relative/folder"}).status_code == 400


def test_a_project_saved_as_untrusted_gets_no_settings_file_and_a_trusted_one_does(served, pi, tmp_path):
    from support.cli import trust_project

    refused_folder, trusted_folder = tmp_path / "said-no", tmp_path / "said-yes"
    for folder in (refused_folder, trusted_folder):
        (folder / ".pi").mkdir(parents=True)
    trust_project(pi.agent_dir, refused_folder, False)
    trust_project(pi.agent_dir, trusted_folder, True)
    assert served.http.get("/api/settings", params={"cwd": str(refused_folder)}).json()["projectTrusted"] is False
    refused = served.http.put("/api/settings", json={"scope": "project", "cwd": str(refused_folder),
                                                     "defaultThinkingLevel": "high"})
    assert refused.status_code == 403
    assert not (refused_folder / ".pi" / "settings.json").exists()
    saved = served.http.put("/api/settings", json={"scope": "project", "cwd": str(trusted_folder),
                                                   "defaultThinkingLevel": "high"})
    assert saved.status_code == 200 and saved.json()["project"] == {"defaultThinkingLevel": "high"}
    assert json.loads((trusted_folder / ".pi" / "settings.json").read_text()) == {"defaultThinkingLevel": "high"}


def test_an_empty_pi_folder_below_a_trusted_project_takes_project_saves(served, pi):
    """A sub-folder with a bare ``.pi`` of its own, under a project trusted with /trust,
    is trusted by that decision (pi's closest saved decision), so its project file may
    be written, as the chat would load it."""
    pi.trust_project()
    below = pi.cwd / "packages" / "web"
    (below / ".pi").mkdir(parents=True)
    state = served.http.get("/api/settings", params={"cwd": str(below)}).json()
    assert state["projectTrusted"] is True
    saved = served.http.put("/api/settings", json={"scope": "project", "cwd": str(below),
                                                   "defaultThinkingLevel": "low"})
    assert saved.status_code == 200, saved.text
    assert json.loads((below / ".pi" / "settings.json").read_text()) == {"defaultThinkingLevel": "low"}


def test_a_bare_pi_folder_takes_project_saves_only_where_it_stays_trusted_after(served, pi, tmp_path):
    """A folder trusted only for holding nothing to protect would need trust once its
    settings file is written: refused under "ask", saved under defaultProjectTrust "always"."""
    bare = tmp_path / "bare"
    (bare / ".pi").mkdir(parents=True)
    body = {"scope": "project", "cwd": str(bare), "defaultThinkingLevel": "low"}
    assert served.http.put("/api/settings", json=body).status_code == 403
    assert not (bare / ".pi" / "settings.json").exists()
    (pi.agent_dir / "settings.json").write_text(json.dumps({"defaultProjectTrust": "always"}))
    assert served.http.get("/api/settings", params={"cwd": str(bare)}).json()["projectTrusted"] is True
    assert served.http.put("/api/settings", json=body).status_code == 200
    assert json.loads((bare / ".pi" / "settings.json").read_text()) == {"defaultThinkingLevel": "low"}
