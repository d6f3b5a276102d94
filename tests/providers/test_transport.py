"""The HTTP client under every provider request (httpcore's pool, spoken to directly):
what httpx's client did for us still holds."""

import asyncio
import gzip
import zlib

import pytest

from pi_plugins.providers.transport import Client, environment_proxies, proxy_for


class OneShotServer:
    """Answers every request on 127.0.0.1 with ``answer`` and records the requests' heads."""

    def __init__(self, answer: bytes):
        self.answer = answer
        self.heads: list[str] = []

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _serve(self, reader, writer):
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        self.heads.append(head)
        length = next((int(line.split(":", 1)[1]) for line in head.split("\r\n")
                       if line.lower().startswith("content-length:")), 0)
        await reader.readexactly(length)
        writer.write(self.answer)
        await writer.drain()
        writer.close()


def answer(body: bytes, *headers: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", f"Content-Length: {len(body)}",
             "Connection: close", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def fetch(url: str, **headers: str) -> tuple[int, dict, bytes]:
    client = Client(2)
    try:
        response = await client.send("POST", url, headers=headers, content=b'{"a":1}')
        body = b"".join([chunk async for chunk in response.aiter_bytes()])
        await response.aclose()
        return response.status_code, dict(response.headers), body
    finally:
        await client.aclose()


def test_a_request_carries_the_default_headers_its_length_and_url_credentials_as_basic_auth():
    async def scenario():
        async with OneShotServer(answer(b"data: 1\n\n")) as server:
            status, headers, body = await fetch(f"http://me:s%40cret@127.0.0.1:{server.port}/v1",
                                                **{"X-Api-Key": "k"})
            return status, headers, body, server.heads[0]

    status, headers, body, head = asyncio.run(scenario())
    assert status == 200 and body == b"data: 1\n\n" and headers["content-type"] == "text/event-stream"
    lines = head.lower().split("\r\n")
    assert lines[0] == "post /v1 http/1.1"
    assert "content-length: 7" in lines and "x-api-key: k" in lines and "accept-encoding: gzip, deflate" in lines
    assert any(line.startswith("user-agent: pi-harness/") for line in lines)
    assert "authorization: basic bwu6c0bjcmv0" in lines  # me:s@cret


@pytest.mark.parametrize("encoding, encode", [
    ("gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
])
def test_a_compressed_answer_is_decoded(encoding, encode):
    async def scenario():
        async with OneShotServer(answer(encode(b"data: hello\n\n" * 50), f"Content-Encoding: {encoding}")) as server:
            return await fetch(f"http://127.0.0.1:{server.port}/v1")

    assert asyncio.run(scenario())[2] == b"data: hello\n\n" * 50


def test_repeated_headers_are_joined_and_names_read_without_case():
    async def scenario():
        async with OneShotServer(answer(b"", "X-Thing: a", "x-thing: b")) as server:
            return await fetch(f"http://127.0.0.1:{server.port}/v1")

    assert asyncio.run(scenario())[1]["x-thing"] == "a, b"


def test_the_proxy_the_environment_names_carries_the_request_unless_no_proxy_names_the_host(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)

    async def scenario():
        async with OneShotServer(answer(b"via proxy")) as proxy, OneShotServer(answer(b"direct")) as target:
            monkeypatch.setenv("HTTP_PROXY", f"127.0.0.1:{proxy.port}")
            proxied = await fetch(f"http://127.0.0.1:{target.port}/v1")
            monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
            direct = await fetch(f"http://127.0.0.1:{target.port}/v1")
            return proxied[2], proxy.heads, direct[2]

    proxied, proxy_heads, direct = asyncio.run(scenario())
    assert proxied == b"via proxy" and proxy_heads[0].startswith("POST http://127.0.0.1:")
    assert direct == b"direct"


def test_no_proxy_entries_are_read_as_curl_and_httpx_read_them(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("NO_PROXY", "example.com, .internal, ::1, api.local:8443")
    proxies = environment_proxies()
    assert proxy_for("http", "example.com", None, proxies) is None  # no proxy for plain http
    assert proxy_for("https", "example.com", None, proxies) is None
    assert proxy_for("https", "www.example.com", None, proxies) is None
    assert proxy_for("https", "wwwexample.com", None, proxies) == "http://proxy:3128"
    assert proxy_for("https", "internal", None, proxies) == "http://proxy:3128"
    assert proxy_for("https", "a.internal", None, proxies) is None
    assert proxy_for("https", "::1", None, proxies) is None
    assert proxy_for("https", "api.local", 8443, proxies) is None
    assert proxy_for("https", "api.local", None, proxies) == "http://proxy:3128"
    monkeypatch.setenv("NO_PROXY", "*")
    assert proxy_for("https", "anything", None, environment_proxies()) is None
