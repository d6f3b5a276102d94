"""The HTTP API of ``pi serve``: health, listing, opening and closing live sessions,
their export; bad requests get a clear error."""

from __future__ import annotations

from support.llm_server import Reply


def test_health_answers_without_a_token(served):
    response = served.http.get("/api/health", headers={"Authorization": ""})
    assert response.status_code == 200
    assert response.json() == {"ok": True, "version": __import__("pi_core").__version__}


def test_a_new_session_is_live_and_listed_for_its_folder(served):
    response = served.http.post("/api/sessions", json={"cwd": served.cwd, "model": "local/test-model"})
    assert response.status_code == 201
    created = response.json()
    assert set(created) == {"id", "path"} and created["path"].endswith(f"_{created['id']}.jsonl")
    rows = served.http.get("/api/sessions", params={"cwd": served.cwd}).json()["sessions"]
    assert [(r["id"], r["live"], r["cwd"]) for r in rows] == [(created["id"], True, served.cwd)]
    assert set(rows[0]) == {"id", "path", "cwd", "name", "modified", "messageCount", "live", "firstMessage"}
    assert rows[0]["firstMessage"] == "(no messages)"  # as `pi -r` lists it


def test_a_session_is_listed_by_its_first_message_until_it_has_a_name(served, server):
    server.push(Reply(text="Fine."))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="  how are\n  you?")
    client.event("agent_end")
    [row] = served.http.get("/api/sessions").json()["sessions"]
    assert (row["name"], row["firstMessage"]) == (None, "how are you?")
    client.ok("set_session_name", name="Greetings")
    served.http.delete(f"/api/sessions/{session}")  # from its file now
    [row] = served.http.get("/api/sessions").json()["sessions"]
    assert (row["name"], row["firstMessage"], row["live"]) == ("Greetings", "how are you?", False)


def test_deleting_a_session_file_closes_it_and_removes_only_files_in_the_sessions_folder(served, server, pi):
    from pathlib import Path

    server.push(Reply(text="Soon gone."))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="delete me later")
    client.event("agent_end")
    path = served.http.get("/api/sessions").json()["sessions"][0]["path"]
    outside = pi.cwd / "elsewhere.jsonl"
    outside.write_text(Path(path).read_text())
    refused = served.http.delete("/api/session-files", params={"path": str(outside)})
    assert refused.status_code == 403 and outside.exists()
    assert served.http.delete("/api/session-files", params={"path": path + ".nope"}).status_code == 403
    assert served.http.delete("/api/session-files").status_code == 400
    assert served.http.delete("/api/session-files", params={"path": path}).status_code == 204
    assert not Path(path).exists()
    assert served.http.get("/api/sessions").json()["sessions"] == []
    assert served.http.get(f"/api/sessions/{session}/export").status_code == 404  # closed too
    assert served.http.delete("/api/session-files", params={"path": path}).status_code == 404


def test_a_served_session_is_written_to_the_same_file_the_cli_continues(served, server, pi):
    server.push(Reply(text="Stored answer."))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="remember this")
    client.event("agent_end")
    rows = served.http.get("/api/sessions").json()["sessions"]
    assert [(r["id"], r["messageCount"], r["live"]) for r in rows] == [(session, 3, True)]
    assert served.http.delete(f"/api/sessions/{session}").status_code == 204
    rows = served.http.get("/api/sessions").json()["sessions"]
    assert [(r["id"], r["live"]) for r in rows] == [(session, False)]  # the file stays
    # `pi -c` continues it (the same lines a CLI session has)
    lines = [__import__("json").loads(l) for l in open(rows[0]["path"])]
    assert lines[0]["type"] == "session" and lines[0]["id"] == session
    assert [l["message"]["role"] for l in lines if l["type"] == "message"] == ["system", "user", "assistant"]


def test_an_existing_session_opens_live_by_id_or_path(served, server):
    server.push(Reply(text="First."), Reply(text="Second."))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="one")
    client.event("agent_end")
    path = served.live(session).path
    served.http.delete(f"/api/sessions/{session}")
    again = served.http.post("/api/sessions", json={"cwd": served.cwd, "session": session[:8]})
    assert again.status_code == 201 and again.json() == {"id": session, "path": str(path)}
    # opening it a second time gives the same live session, not a second writer
    by_path = served.http.post("/api/sessions", json={"cwd": served.cwd, "session": str(path)})
    assert by_path.json()["id"] == session
    messages = served.socket(session).ok("get_messages")["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]


def test_a_new_session_without_a_folder_is_in_the_folder_pi_serve_runs_in(served):
    created = served.http.post("/api/sessions", json={"model": "local/test-model"}).json()
    assert served.live(created["id"]).harness.session.cwd == served.cwd


def test_export_is_the_sessions_html_page(served, server):
    server.push(Reply(text="Exported answer."))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="export me")
    client.event("agent_end")
    response = served.http.get(f"/api/sessions/{session}/export")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert "Exported answer." in response.text


def test_bad_requests_get_a_clear_error(served, tmp_path):
    post = served.http.post
    assert post("/api/sessions", content=b"not json").status_code == 400
    assert post("/api/sessions", json={"cwd": 3}).json() == {"error": "'cwd' must be a string"}
    assert post("/api/sessions", json={"cwd": "relative/folder"}).status_code == 400
    assert post("/api/sessions", json={"cwd": str(tmp_path / "missing")}).status_code == 400
    assert post("/api/sessions", json={"cwd": served.cwd, "model": "nope/none"}).status_code == 400
    assert post("/api/sessions", json={"cwd": served.cwd, "session": "feedface"}).status_code == 404
    assert served.http.delete("/api/sessions/unknown").status_code == 404
    assert served.http.get("/api/sessions/unknown/export").status_code == 404


def test_serve_without_its_dependencies_says_which_command_installs_them(monkeypatch):
    import importlib.util

    from click.testing import CliRunner

    from pi_plugins.serve import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    result = CliRunner().invoke(cli.serve_command, [])
    assert result.exit_code == 2
    assert "pip install 'pi-harness[serve]'" in result.output and "uvicorn" in result.output


def test_an_existing_session_runs_in_its_own_folder(served, server, tmp_path):
    other = tmp_path / "other-project"
    other.mkdir()
    server.push(Reply(text="In the other folder."))
    first = served.http.post("/api/sessions", json={"cwd": str(other), "model": "local/test-model"}).json()
    client = served.socket(first["id"])
    client.ok("prompt", message="where am I")
    client.event("agent_end")
    served.http.delete(f"/api/sessions/{first['id']}")
    # found by its id from another folder: it still runs where it was made
    again = served.http.post("/api/sessions", json={"cwd": served.cwd, "session": first["id"]})
    assert again.status_code == 201
    assert served.live(first["id"]).harness.ctx.cwd == str(other)


def test_settings_refuse_bad_values_and_keys_are_stored_and_removed(served, pi):
    import json

    bad = served.http.put("/api/settings", json={"defaultModel": "nope/none"})
    assert bad.status_code == 400 and "no model" in bad.json()["error"]
    assert served.http.put("/api/settings", json={"defaultThinkingLevel": "huge"}).status_code == 400
    assert served.http.put("/api/settings", content=b"[").status_code == 400
    assert served.http.put("/api/providers/openai/key", json={"key": ""}).status_code == 400
    assert served.http.put("/api/providers/openai/key", json={"key": "sk-1"}).status_code == 204
    assert json.loads((pi.agent_dir / "auth.json").read_text())["openai"]["key"] == "sk-1"
    listed = served.http.get("/api/settings").json()
    assert {"name": "openai", "hasKey": True} in listed["providers"] and "sk-1" not in json.dumps(listed)
    assert served.http.delete("/api/providers/openai/key").status_code == 204
    assert "openai" not in json.loads((pi.agent_dir / "auth.json").read_text())
    assert served.http.delete("/api/providers/openai/key").status_code == 404
    assert served.http.get("/api/settings", headers={"Authorization": ""}).status_code == 401
