"""The rules of redaction (:mod:`pi_plugins.keys.rules`, the ``keys`` plugin): which values
count as keys, what replaces them, and what is left alone."""

import json

from pi_plugins.keys import rules as keys
from pi_plugins.models.registry import ModelRegistry
from pi_core.protocol.messages import TextContent
from pi_core.protocol.tools import ToolResult
from pi_plugins import keys as keys_plugin


def test_a_key_inside_a_longer_one_is_not_left_half_shown():
    held = {"abcdefgh": "SHORT_KEY", "abcdefgh-and-more": "LONG_KEY"}
    assert keys.redact("x abcdefgh-and-more y abcdefgh", held) == \
        "x [redacted: LONG_KEY] y [redacted: SHORT_KEY]"


def test_values_under_eight_characters_are_not_redacted(monkeypatch):
    monkeypatch.setenv("SHORT_TOKEN", "1234567")
    monkeypatch.setenv("LONG_TOKEN", "12345678")
    held = keys.held_keys()
    assert "1234567" not in held and held["12345678"] == "LONG_TOKEN"


def test_a_registry_holds_auth_json_runtime_and_models_json_keys_by_whose_they_are(tmp_path):
    (tmp_path / "auth.json").write_text(json.dumps({"acme": {"type": "api_key", "key": "acme-key-from-auth"}}))
    (tmp_path / "models.json").write_text(json.dumps({"providers": {
        "lit": {"baseUrl": "http://example.invalid/v1", "api": "openai-completions", "apiKey": "literal-models-key",
                "models": [{"id": "m"}]},
        "var": {"baseUrl": "http://example.invalid/v1", "api": "openai-completions", "apiKey": "VAR_CRED",
                "models": [{"id": "m"}]},
        "cmd": {"baseUrl": "http://example.invalid/v1", "api": "openai-completions",
                "apiKey": "!touch ran-for-redaction", "models": [{"id": "m"}]},
    }}))
    registry = ModelRegistry(agent_dir=tmp_path, env={"VAR_CRED": "value-of-var-cred"})
    registry.set_runtime_key("lit", "the-runtime-key")
    assert dict(registry.held_keys()) == {
        "the-runtime-key": "lit", "acme-key-from-auth": "acme", "literal-models-key": "lit",
        "value-of-var-cred": "VAR_CRED"}
    assert {"VAR_CRED", "LIT_API_KEY"} <= registry.key_variables()
    assert not (tmp_path / "ran-for-redaction").exists()  # a command key is never run for this
    assert keys.redact("the-runtime-key and value-of-var-cred") == \
        "[redacted: lit] and [redacted: VAR_CRED]"


def test_the_plugin_redacts_text_and_details_and_keeps_what_has_no_key(monkeypatch):
    monkeypatch.setenv("THE_SECRET", "s3cr3t-value-99")
    result = ToolResult(content=[TextContent("got s3cr3t-value-99")],
                        details={"diff": ["- s3cr3t-value-99", "+ other"], "lines": 2})
    patched = keys_plugin.after_tool_call(result=result, event=None, ctx=None)
    assert patched.content[0].text == "got [redacted: THE_SECRET]"
    assert patched.details == {"diff": ["- [redacted: THE_SECRET]", "+ other"], "lines": 2}
    assert result.content[0].text == "got s3cr3t-value-99"  # a copy: the original is not changed
    clean = ToolResult(content=[TextContent("nothing to hide")], details={"n": 1})
    assert keys_plugin.after_tool_call(result=clean, event=None, ctx=None) is None


def test_ctx_exec_starts_without_the_keys_and_shows_none(tmp_path, monkeypatch):
    import asyncio

    from support.harnesses import make

    monkeypatch.setenv("PLUGIN_SECRET", "plugin-secret-value-1")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "leak.txt").write_text("plugin-secret-value-1")
    harness, *_ = make(tmp_path, [])
    result = asyncio.run(harness.ctx.exec("env; cat leak.txt", cwd=str(tmp_path / "work")))
    assert "PLUGIN_SECRET=" not in result.stdout and "PATH=" in result.stdout
    assert result.stdout.endswith("[redacted: PLUGIN_SECRET]")
