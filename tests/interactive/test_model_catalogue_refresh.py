"""pi 1.6's ``/model`` refreshes the model catalogues in the background: a catalogue the
start-up refresh could not get is asked for again, and its new models are in the next
``/model`` list (against a local stand-in of pi.dev, in this process on an emulated screen)."""

from __future__ import annotations

import json
import time

from support.catalogue_server import Catalogues

GROQ_NEW = {"id": "groq-new-model", "name": "Groq New", "api": "openai-completions", "provider": "groq",
            "baseUrl": "https://api.groq.com/openai/v1", "reasoning": False, "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 131072,
            "maxTokens": 8192, "type": "chat"}


def test_model_refreshes_the_catalogues_and_the_next_list_has_the_new_models(pi_screen, monkeypatch):
    from email.utils import formatdate

    catalogues = Catalogues()
    try:
        catalogues.answer("/api/models/providers/groq", *[(500, {}, b"down")] * 3,
                          (200, {"last-modified": formatdate(time.time() + 86_400 * 365, usegmt=True)}, [GROQ_NEW]))
        monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://pi.dev": catalogues.url}))
        monkeypatch.setattr("pi_plugins.providers.background_refresh.START_DELAY_SECONDS", 0.0)
        term = pi_screen()
        deadline = time.monotonic() + 10
        store = term.agent_dir / "models-store.json"
        while not store.exists() and time.monotonic() < deadline:  # the start-up refresh failed (kept, unchecked)
            time.sleep(0.05)
        assert len(catalogues.requests) == 3 and "lastModified" not in json.loads(store.read_text())["groq"]
        time.sleep(0.1)
        term.submit("/model")
        term.wait_for("Select a model")
        while len(catalogues.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(catalogues.requests) == 4
        term.press("Escape")
        # closed before typing on: an Escape followed at once by "/" reads as Alt+/ and the
        # text would go to the still-open list's search
        term.wait_for(lambda screen: "Select a model" not in screen)
        term.submit("/model groq-new")
        term.wait_for("groq-new-model [groq]")
    finally:
        catalogues.close()


def _chat_after_a_failed_start_up_refresh(pi_screen, monkeypatch, catalogues):
    """The chat, once its start-up refresh of Groq failed (so ``/model`` asks again);
    pi.dev then holds its next answer until the test lets it go."""
    import threading
    from email.utils import formatdate

    catalogues.answer("/api/models/providers/groq", *[(500, {}, b"down")] * 3,
                      (200, {"last-modified": formatdate(time.time() + 86_400 * 365, usegmt=True)}, [GROQ_NEW]))
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://pi.dev": catalogues.url}))
    monkeypatch.setattr("pi_plugins.providers.background_refresh.START_DELAY_SECONDS", 0.0)
    term = pi_screen()
    deadline = time.monotonic() + 10
    while len(catalogues.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    catalogues.hold = threading.Event()
    return term


def test_the_open_model_list_is_redrawn_when_the_refresh_lands(pi_screen, monkeypatch):
    catalogues = Catalogues()
    try:
        term = _chat_after_a_failed_start_up_refresh(pi_screen, monkeypatch, catalogues)
        term.submit("/model")
        term.wait_for("Refreshing model catalogs…")
        term.type("groq-new")
        term.wait_for("No matches")
        catalogues.hold.set()
        term.wait_for("groq-new-model [groq]")
        term.wait_for("Model catalogs refreshed.")
    finally:
        catalogues.close()


def test_a_model_name_not_yet_known_waits_for_the_refresh_then_switches(pi_screen, monkeypatch):
    catalogues = Catalogues()
    try:
        term = _chat_after_a_failed_start_up_refresh(pi_screen, monkeypatch, catalogues)
        term.submit("/model groq-new-model")
        term.wait_for("Refreshing model catalogs…")
        catalogues.hold.set()
        term.wait_for("Model: groq/groq-new-model")
    finally:
        catalogues.close()
