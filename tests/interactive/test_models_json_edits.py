"""``/model`` and ``/reload`` see ``models.json`` as it is now, as pi 1.6's do: a model
added while the chat runs can be chosen, one removed is gone, and a ``models.json`` that
no longer parses is said once in pi 1.6's words while the built-in models stay."""

import json


def _write_models(term, server, ids):
    models = server.models_json("local", models=[{"id": i, "name": i.title(), "contextWindow": 64000} for i in ids])
    (term.agent_dir / "models.json").write_text(json.dumps(models))


def test_model_sees_a_model_added_to_models_json_while_the_chat_runs(pi_screen, server):
    term = pi_screen()
    _write_models(term, server, ["test-model", "added-model"])
    term.submit("/model added-model")
    term.wait_for("Model: local/added-model")
    assert term._app.harness.model.id == "added-model"


def test_reload_sees_a_model_removed_from_models_json(pi_screen, server):
    term = pi_screen()
    _write_models(term, server, ["test-model"])
    term.submit("/reload")
    term.wait_for("Reloaded")
    keys = [m.key for m in term._app.harness.available_models()]
    assert "local/test-model" in keys and "local/other-model" not in keys


def test_reload_says_when_models_json_no_longer_parses(pi_screen):
    term = pi_screen()
    (term.agent_dir / "models.json").write_text("{ not json")
    term.submit("/reload")
    screen = term.wait_for("Reloaded")
    assert "models.json error:" in " ".join(screen.split())
