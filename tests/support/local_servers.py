"""Stub local model servers on 127.0.0.1: the scripted LLM server (chat completions at
``/v1/chat/completions``) plus the discovery endpoints of one kind of server, answered
the way the real one answers them:

==============  ===============================================================
``ollama``      ``GET /api/tags``, ``POST /api/show`` (capabilities, model_info,
                parameters), ``GET /v1/models``
``llama.cpp``   ``GET /v1/models`` (``owned_by: llamacpp``), ``GET /props``
``lmstudio``    ``GET /v1/models`` (``owned_by: organization_owner``)
``vllm``        ``GET /v1/models`` (``owned_by: vllm``, ``max_model_len``)
==============  ===============================================================

Every GET is recorded in ``gets`` (path). :class:`SilentPort` accepts connections and
never answers; :func:`free_port` is a port where nothing listens.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

from support.llm_server import LlmServer, _Handler

KINDS = ("ollama", "llama.cpp", "lmstudio", "vllm")


class LocalServer(LlmServer):
    def __init__(self, kind: str, models: list[str] | None = None, *, context: int | None = 32768,
                 tools: bool = True, vision: bool = False) -> None:
        super().__init__()
        assert kind in KINDS, kind
        self.kind = kind
        self.model_ids = models or ["qwen2.5-coder:0.5b" if kind == "ollama" else "qwen2.5-coder-0.5b"]
        self.context = context
        self.tools = tools
        self.vision = vision
        self.gets: list[str] = []

    def start(self) -> "LocalServer":
        from http.server import ThreadingHTTPServer

        handler = type("Handler", (_LocalHandler,), {"owner": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()
        return self

    # ------------------------------------------------------------ answers

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any] | None:
        kind, ids = self.kind, self.model_ids
        if kind == "ollama" and method == "GET" and path == "/api/tags":
            return 200, {"models": [{"name": i, "model": i, "size": 1, "details": {}} for i in ids]}
        if kind == "ollama" and method == "POST" and path == "/api/show":
            name = (body or {}).get("model") or (body or {}).get("name")
            if name not in ids:
                return 404, {"error": f"model '{name}' not found"}
            capabilities = ["completion"] + (["tools"] if self.tools else []) + (["vision"] if self.vision else [])
            info = {"general.architecture": "qwen2"}
            if self.context:
                info["qwen2.context_length"] = self.context
            return 200, {"capabilities": capabilities, "model_info": info, "parameters": "stop \"<|im_end|>\""}
        if method == "GET" and path == "/v1/models":
            owner = {"ollama": "library", "llama.cpp": "llamacpp", "lmstudio": "organization_owner", "vllm": "vllm"}[kind]
            data = []
            for i in ids:
                item = {"id": i, "object": "model", "created": 0, "owned_by": owner}
                if kind == "vllm" and self.context:
                    item["max_model_len"] = self.context
                data.append(item)
            return 200, {"object": "list", "data": data}
        if kind == "llama.cpp" and method == "GET" and path == "/props":
            settings = {"n_ctx": self.context} if self.context else {}
            return 200, {"default_generation_settings": settings, "total_slots": 1,
                         "chat_template_caps": {"supports_tools": self.tools},
                         "modalities": {"vision": self.vision}}
        return None


class _LocalHandler(_Handler):
    owner: LocalServer

    def _json(self, status: int, body: dict, headers: dict | None = None) -> None:
        try:
            super()._json(status, body, headers)
        except (BrokenPipeError, ConnectionResetError):  # the probe had what it needed
            self.close_connection = True

    def do_GET(self) -> None:
        self.owner.gets.append(self.path)
        found = self.owner.answer("GET", self.path, None)
        if found is None:
            return super().do_GET()
        self._json(*found)

    def do_POST(self) -> None:
        if self.path.startswith("/api/"):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            found = self.owner.answer("POST", self.path, body)
            self._json(*(found or (404, {"error": "not found"})))
            return
        super().do_POST()


class SilentPort:
    """A port that accepts connections (the kernel completes the handshake) and never
    answers: the probe must give up on its own."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "SilentPort":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
