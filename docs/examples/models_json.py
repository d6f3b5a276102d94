"""models.json: add a provider served on your own machine (here an Ollama-style,
OpenAI-compatible server) and see how pi resolves models and keys.

Run it: python docs/examples/models_json.py
(It writes into a temporary agent dir and never contacts the server.)
"""

import json
import os
import tempfile
from pathlib import Path

from pi_core import AuthStorage, ModelRegistry

MODELS_JSON = {
    "providers": {
        "ollama": {
            "baseUrl": "http://localhost:11434/v1",
            "api": "openai-completions",
            "models": [
                {"id": "qwen2.5-coder:7b", "contextWindow": 32768, "maxTokens": 8192},
                {"id": "llama3.1:8b", "name": "Llama 3.1 8B"},
            ],
        }
    }
}

with tempfile.TemporaryDirectory() as agent_dir:
    Path(agent_dir, "models.json").write_text(json.dumps(MODELS_JSON, indent=2))
    registry = ModelRegistry(agent_dir=agent_dir, env={})

    found = registry.resolve("ollama/qwen2.5-coder:7b")
    model = found.model
    print(model.key, model.api, model.base_url, model.context_window, model.max_tokens)
    print("llama name:", registry.find("ollama", "llama3.1:8b").name)
    print("thinking suffix:", registry.resolve("ollama/llama3.1:8b:high").thinking_level)
    print("key for a local server:", registry.api_key(model))  # none needed

    # Keys: --api-key, then auth.json, then the environment, then models.json's apiKey.
    AuthStorage(Path(agent_dir, "auth.json")).set_api_key("ollama", "sk-from-auth-json")
    registry.refresh()
    print("key from auth.json:", registry.api_key(model))
    print("auth.json mode:", oct(os.stat(Path(agent_dir, "auth.json")).st_mode & 0o777))
    registry.set_runtime_key("ollama", "sk-from-the-command-line")
    print("key from --api-key:", registry.api_key(model))
