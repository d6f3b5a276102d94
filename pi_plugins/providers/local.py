"""Zero-config local models: an Ollama, llama.cpp server, LM Studio or vLLM running on
this machine is found and used without a models.json entry.

The harness asks (``discover_models``) only when nothing else is configured and never
offline; this plugin then probes its endpoints in parallel and returns what answered
within :data:`BUDGET_S` in total, so a port that accepts and never answers costs at most
that. Default endpoints, in the order that picks the default model:

=======================  ==========  ==================================================
``127.0.0.1:11434``      Ollama      ``/api/tags``; ``/api/show``: context, tools, vision
``127.0.0.1:8080``       llama.cpp   ``/v1/models``; ``/props``: context, tools, vision
``127.0.0.1:1234``       LM Studio   ``/v1/models``
``127.0.0.1:8000``       vLLM        ``/v1/models`` (``max_model_len``)
=======================  ==========  ==================================================

The setting ``localModels: {"enabled": true|false, "endpoints": [URL, ...]}`` replaces the
list (an endpoint's kind is read from its answers, the port is only a hint). A server
that does not say its context length gets :data:`DEFAULT_CONTEXT`, and every discovered
model gets the request shape small local servers accept (:data:`LOCAL_COMPAT`).

What small servers do differently, and what a discovered model carries for it in
``compat`` (keys of pi-harness's own, set only here):

- they run a few requests at once and may drop a running one when another arrives
  (llama-cpp-python does unless started with ``--interrupt_requests False``): requests
  to one server go out at most ``maxConcurrentRequests`` at a time, the others wait
  (llama.cpp's ``/props`` says ``total_slots``; vLLM batches any number; otherwise one);
- a dropped answer may still end with ``[DONE]``: ``requiresFinishReason`` makes a stream
  without a ``finish_reason`` a broken one;
- some never report usage (llama-cpp-python ignores ``stream_options``):
  ``estimateMissingUsage`` estimates it, marked ``estimated`` in the usage;
- llama-cpp-python names a model by its GGUF file's path: the model's id is the file's
  name without ``.gguf`` and ``requestModel`` keeps the path for the request.

The probe speaks a few lines of HTTP/1.1 over asyncio itself: loading the HTTP client would cost a
good part of the budget before the first byte is sent.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any
from urllib.parse import urlsplit

from pi_core import hookimpl
from pi_core.protocol.model import Model

#: Seconds for the whole probe, all endpoints together.
BUDGET_S = 0.3
DEFAULT_ENDPOINTS = (
    "http://127.0.0.1:11434",
    "http://127.0.0.1:8080",
    "http://127.0.0.1:1234",
    "http://127.0.0.1:8000",
)
PORT_KINDS = {11434: "ollama", 8080: "llama.cpp", 1234: "lmstudio", 8000: "vllm"}
#: Tokens, when the server does not say: small enough for most local set-ups.
DEFAULT_CONTEXT = 8192
#: What small local servers accept: plain-string user text and ``""`` beside tool calls
#: (llama.cpp's and llama-cpp-python's chat templates fail on the others), ``max_tokens``,
#: and none of the fields only hosted APIs know.
LOCAL_COMPAT = {
    "supportsTextContentParts": False,
    "supportsNullAssistantContent": False,
    "maxTokensField": "max_tokens",
    "supportsStore": False,
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": False,
    "supportsStrictMode": False,
    "requiresFinishReason": True,
    "estimateMissingUsage": True,
}
_MAX_BODY = 8 * 1024 * 1024
_NOT_CHAT = r"embed|rerank|whisper|tts"  # compiled by ``re`` on first use


def endpoints_from(settings: Any) -> list[str] | None:
    """The endpoints to probe (``None``: probing is switched off)."""
    config = settings.get("localModels") if settings is not None else None
    if not isinstance(config, dict):
        return list(DEFAULT_ENDPOINTS)
    if config.get("enabled") is False:
        return None
    endpoints = config.get("endpoints")
    if isinstance(endpoints, list):
        return [e.strip() for e in endpoints if isinstance(e, str) and e.strip()]
    return list(DEFAULT_ENDPOINTS)


# ---------------------------------------------------------------- a tiny HTTP client


async def fetch_json(base: str, path: str, body: Any = None) -> tuple[int, Any]:
    """``GET`` (or ``POST`` with a JSON ``body``) ``base + path``: the status and the
    parsed JSON (``None`` when the body is not JSON)."""
    parts = urlsplit(base)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if parts.scheme == "https":
        import ssl

        reader, writer = await asyncio.open_connection(host, port, ssl=ssl.create_default_context())
    else:
        reader, writer = await asyncio.open_connection(host, port)
    try:
        data = b"" if body is None else json.dumps(body).encode()
        lines = [f"{'GET' if body is None else 'POST'} {parts.path.rstrip('/')}{path} HTTP/1.1",
                 f"Host: {f'[{host}]' if ':' in host else host}:{port}", "Accept: application/json",
                 "Connection: close"]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        status = int(head.split(" ", 2)[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in head.split("\r\n")[1:]) if k}
        payload: bytes | bytearray
        if "content-length" in headers:
            payload = await reader.readexactly(min(int(headers["content-length"]), _MAX_BODY))
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            payload = bytearray()
            while len(payload) < _MAX_BODY:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    break
                payload += await reader.readexactly(size)
                await reader.readexactly(2)
        else:
            payload = await reader.read(_MAX_BODY)
    finally:
        writer.close()
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, None


async def _ok_json(base: str, path: str, body: Any = None) -> Any:
    """The JSON answer, or ``None`` for an error status, a refused port or garbage."""
    try:
        status, value = await fetch_json(base, path, body)
    except (OSError, ValueError, IndexError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    return value if 200 <= status < 300 else None


# ---------------------------------------------------------------- one endpoint


class Endpoint:
    """What one endpoint said so far; filled in while its answers arrive, read at the
    deadline whatever has come."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        if self.url.endswith("/v1"):
            self.url = self.url[:-3]
        port = urlsplit(self.url).port
        self.kind: str | None = None
        self.hint = PORT_KINDS.get(port or 0, "local")
        #: id -> {"context": int|None, "tools": bool|None, "vision": bool|None}
        self.models: dict[str, dict] = {}
        #: Requests the server runs at once (llama.cpp's ``total_slots``), if it says.
        self.slots: int | None = None

    async def probe(self) -> None:
        tags = asyncio.ensure_future(_ok_json(self.url, "/api/tags"))
        listing = asyncio.ensure_future(_ok_json(self.url, "/v1/models"))
        props = asyncio.ensure_future(_ok_json(self.url, "/props"))
        try:
            found = await tags
            if isinstance(found, dict) and isinstance(found.get("models"), list):
                self.kind = "ollama"
                listing.cancel()
                props.cancel()
                await self._ollama(found["models"])
                return
            found = await listing
            if not isinstance(found, dict) or not isinstance(found.get("data"), list):
                return
            for item in found["data"]:
                if isinstance(item, dict) and isinstance(item.get("id"), str) and not re.search(_NOT_CHAT, item["id"], re.IGNORECASE):
                    self.models[item["id"]] = {"context": _positive(item.get("max_model_len")),
                                               "tools": None, "vision": None}
            owners = {item.get("owned_by") for item in found["data"] if isinstance(item, dict)}
            if "vllm" in owners or any("max_model_len" in i for i in found["data"] if isinstance(i, dict)):
                self.kind = "vllm"
            elif "organization_owner" in owners:
                self.kind = "lmstudio"
            elif "llamacpp" in owners:
                self.kind = "llama.cpp"
            self._llama_props(await props)
        finally:
            for task in (tags, listing, props):
                task.cancel()

    async def _ollama(self, listed: list) -> None:
        found = [m.get("name") or m.get("model") for m in listed if isinstance(m, dict)]
        names: list[str] = [n for n in found if isinstance(n, str) and n]
        for name in names:
            self.models[name] = {"context": None, "tools": None, "vision": None}
        shows = await asyncio.gather(*(_ok_json(self.url, "/api/show", {"model": n}) for n in names))
        for name, show in zip(names, shows, strict=True):
            if not isinstance(show, dict):
                continue
            info = self.models[name]
            capabilities = show.get("capabilities")
            if isinstance(capabilities, list):
                if "completion" not in capabilities:
                    del self.models[name]  # an embedding model
                    continue
                info["tools"] = "tools" in capabilities
                info["vision"] = "vision" in capabilities
            served = re.search(r"^num_ctx\s+(\d+)", show.get("parameters") or "", re.MULTILINE)
            trained = [v for k, v in (show.get("model_info") or {}).items() if k.endswith(".context_length")]
            info["context"] = _positive(int(served.group(1)) if served else (trained[0] if trained else None))

    def _llama_props(self, props: Any) -> None:
        if not isinstance(props, dict):
            return
        settings = props.get("default_generation_settings") or {}
        context = _positive(settings.get("n_ctx") if isinstance(settings, dict) else None) or _positive(props.get("n_ctx"))
        caps = props.get("chat_template_caps")
        tools = caps.get("supports_tools") if isinstance(caps, dict) else None
        modalities = props.get("modalities")
        vision = modalities.get("vision") if isinstance(modalities, dict) else None
        if self.kind is None and ("default_generation_settings" in props or "total_slots" in props):
            self.kind = "llama.cpp"
        self.slots = _positive(props.get("total_slots"))
        for info in self.models.values():
            info["context"] = info["context"] or context
            info["tools"] = tools if isinstance(tools, bool) else info["tools"]
            info["vision"] = vision if isinstance(vision, bool) else info["vision"]

    def to_models(self, provider: str) -> list[Model]:
        models, names = [], set()
        for served_id, info in self.models.items():
            context = info["context"] or DEFAULT_CONTEXT
            compat = dict(LOCAL_COMPAT)
            if info["tools"] is False:
                compat["supportsTools"] = False
            slots = self.slots or (None if self.kind == "vllm" else 1)
            if slots is not None:
                compat["maxConcurrentRequests"] = slots
            model_id = file_model_name(served_id)
            if model_id in names or model_id in self.models and model_id != served_id:
                model_id = served_id  # two files of one name: keep them apart
            if model_id != served_id:
                compat["requestModel"] = served_id
            names.add(model_id)
            models.append(Model(
                id=model_id, provider=provider, api="openai-completions", name=model_id,
                base_url=f"{self.url}/v1", input=["text", "image"] if info["vision"] else ["text"],
                context_window=context, max_tokens=max(256, min(8192, context // 4)), compat=compat,
                discovered=True,
            ))
        return models


_PATH = r"^(/|~|\.{1,2}[/\\]|[A-Za-z]:[/\\])|\.gguf$"  # compiled by ``re`` on first use


def file_model_name(model_id: str) -> str:
    """A model id that is a file's path (llama-cpp-python serves ``/models/x/model.gguf``)
    as the file's name without ``.gguf``; any other id (``Qwen/Qwen2.5-0.5B``) as it is."""
    if not re.search(_PATH, model_id, re.IGNORECASE):
        return model_id
    name = re.split(r"[/\\]", model_id.rstrip("/\\"))[-1]
    if name.lower().endswith(".gguf"):
        name = name[:-5]
    return name or model_id


def _positive(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


async def discover(endpoints: list[str], budget_s: float = BUDGET_S) -> list[Model]:
    """The chat models of every endpoint that answered within ``budget_s``, in endpoint
    order; each endpoint's provider is named for its kind (``ollama``, ``llama.cpp``,
    ``lmstudio``, ``vllm``, else ``local``), a second of a kind gets its port too."""
    probes = [Endpoint(url) for url in endpoints]
    tasks = [asyncio.ensure_future(p.probe()) for p in probes]
    deadline = time.monotonic() + budget_s
    done, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
    for task in pending:
        task.cancel()
    if pending:  # cancelled at an await: they end within this loop turn
        await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        if not task.cancelled():
            task.exception()  # a probe that failed found nothing; never let it escape
    models, used = [], set()
    for probe in probes:
        if not probe.models:
            continue
        name = probe.kind or probe.hint
        if name in used:
            name = f"{name}-{urlsplit(probe.url).port}"
        used.add(name)
        models += probe.to_models(name)
    return models


@hookimpl
async def discover_models(settings):
    endpoints = endpoints_from(settings)
    if not endpoints:
        return None
    return await discover(endpoints)


def probed_endpoints(settings) -> list[str]:
    """The endpoints :func:`discover_models` tries with these settings (what ``pi
    --list-models`` names when none answered)."""
    return endpoints_from(settings) or []
