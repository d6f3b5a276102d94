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

Every GET is recorded in ``gets`` (path). ``slots`` is what llama.cpp's ``/props``
says as ``total_slots``; ``props=False`` has no ``/props`` (llama-cpp-python). With
``interrupts=True`` the server behaves as llama-cpp-python without
``--interrupt_requests False``: a chat request arriving while an answer streams stops
that answer, which ends with ``data: [DONE]`` and no ``finish_reason``; the numbers of
the requests stopped so are in ``interrupted``. :class:`SilentPort` accepts connections
and never answers; :func:`free_port` is a port where nothing listens.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from support.llm_server import LlmServer, _Handler

KINDS = ("ollama", "llama.cpp", "lmstudio", "vllm")


class LocalServer(LlmServer):
    def __init__(self, kind: str, models: list[str] | None = None, *, context: int | None = 32768,
                 tools: bool = True, vision: bool = False, slots: int | None = 1, props: bool = True,
                 interrupts: bool = False) -> None:
        super().__init__()
        assert kind in KINDS, kind
        self.kind = kind
        self.model_ids = models or ["qwen2.5-coder:0.5b" if kind == "ollama" else "qwen2.5-coder-0.5b"]
        self.context = context
        self.tools = tools
        self.vision = vision
        self.slots = slots
        self.props = props
        self.interrupts = interrupts
        self.interrupted: list[int] = []
        self._streaming: list[threading.Event] = []
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
        if kind == "llama.cpp" and method == "GET" and path == "/props" and self.props:
            settings = {"n_ctx": self.context} if self.context else {}
            return 200, {"default_generation_settings": settings, "total_slots": self.slots,
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


    def _stream(self, pieces: list[str], reply, number: int, arrived: float, garbage: bool) -> None:
        owner = self.owner
        if not owner.interrupts:
            return super()._stream(pieces, reply, number, arrived, garbage)
        stop = threading.Event()
        with owner._lock:
            for running, held in owner._streaming:  # the new request stops the running answers
                running.set()
                if held is not None:
                    held.set()
            owner._streaming.append((stop, reply.hold))
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for written, piece in enumerate(pieces):
                if reply.hold is not None and written == reply.hold_after:
                    reply.hold.wait(30)
                if stop.is_set():
                    piece = "data: [DONE]\n\n"
                    with owner._lock:
                        owner.interrupted.append(number)
                data = piece.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                if stop.is_set():
                    break
                if reply.delay:
                    time.sleep(reply.delay)  # the model generating its next token
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            with owner._lock:
                owner._streaming.remove((stop, reply.hold))


class Home:
    """An agent dir with no models.json, whose settings point localModels at the stubs."""

    def __init__(self, tmp_path, endpoints, settings=None):
        self.agent_dir = tmp_path / "agent"
        self.cwd = tmp_path / "project"
        self.agent_dir.mkdir()
        self.cwd.mkdir()
        data = {"localModels": {"endpoints": endpoints}, **(settings or {})}
        (self.agent_dir / "settings.json").write_text(json.dumps(data))
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
                    "PI_CODING_AGENT_DIR": str(self.agent_dir), "PYTHONUNBUFFERED": "1"}

    def run(self, *args, env=None, timeout=60):
        return subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args], cwd=self.cwd,
                              env={**self.env, **(env or {})}, capture_output=True, text=True,
                              timeout=timeout)


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
