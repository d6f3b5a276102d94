"""The plain-http client: h11 on asyncio for http:// servers, without httpx."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from pi_plugins.providers import plain_http
from pi_plugins.providers.http import describe_exception
from pi_plugins.providers.plain_http import PlainHttpClient


class Server:
    """A raw HTTP/1.1 server on 127.0.0.1 that answers each request with ``answer(n)``
    (bytes, or None to close the connection unanswered) and counts connections."""

    def __init__(self, answer):
        self.answer, self.connections, self.requests = answer, 0, []

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _serve(self, reader, writer):
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                body = await reader.readexactly(length)
                self.requests.append((head, body))
                reply = self.answer(len(self.requests))
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if b"connection: close" in reply.lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def ok(body: bytes = b"hello", *headers: str) -> bytes:
    extra = "".join(f"{h}\r\n" for h in headers)
    return (f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n{extra}\r\n").encode() + body


def client(max_connections: int = 4, timeout: float = 2) -> PlainHttpClient:
    return PlainHttpClient(max_connections=max_connections, timeout=timeout, connect=timeout)


class Answer:
    """A whole response, as the tests read it."""

    def __init__(self, status: int, headers: dict, content: bytes):
        self.status_code, self.headers, self.content = status, headers, content
        self.text = content.decode()


async def fetch(c: PlainHttpClient, url: str, method: str = "GET", content=None,
                headers=None) -> Answer:
    response = await c.send(c.build_request(method, url, content=content, headers=headers))
    data = b"".join([piece async for piece in response.aiter_bytes()])
    return Answer(response.status_code, response.headers, data)


def test_requests_one_after_another_share_one_connection_and_bodies_arrive_whole():
    async def scenario():
        async with Server(lambda n: ok(f"answer {n}".encode())) as server, client() as c:
            texts = [(await fetch(c, server.url + "/v1", "POST", b"x" * 100_000)).text
                     for _ in range(3)]
            return texts, server.connections, [len(body) for _, body in server.requests]

    texts, connections, sizes = asyncio.run(scenario())
    assert texts == ["answer 1", "answer 2", "answer 3"]
    assert connections == 1 and sizes == [100_000] * 3


def test_a_streamed_request_body_arrives_as_sent_with_its_length():
    async def pieces():
        for n in range(50):
            yield bytes([65 + n % 26]) * 10_000

    async def scenario():
        async with Server(lambda n: ok()) as server, client() as c:
            answer = await fetch(c, server.url, "POST", pieces(), {"content-length": "500000"})
            return answer.status_code, server.requests[0]

    status, (head, body) = asyncio.run(scenario())
    assert status == 200 and body == b"".join(bytes([65 + n % 26]) * 10_000 for n in range(50))
    assert b"content-length: 500000" in head.lower() and b"transfer-encoding" not in head.lower()


def test_the_request_names_its_host_and_target_and_keeps_the_callers_headers():
    async def scenario():
        async with Server(lambda n: ok()) as server, client() as c:
            await fetch(c, server.url + "/v1/chat?x=1", "POST", b"{}",
                        {"Authorization": "Bearer k", "Content-Type": "application/json"})
            return server.url, server.requests[0][0].decode().lower()

    url, head = asyncio.run(scenario())
    assert head.startswith("post /v1/chat?x=1 http/1.1\r\n")
    assert f"host: {url.removeprefix('http://')}" in head
    assert "authorization: bearer k" in head and "content-type: application/json" in head
    assert "content-length: 2" in head and "user-agent: pi-harness/" in head


def test_a_chunked_answer_is_read_and_a_closing_server_gets_a_new_connection():
    chunked = (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
               b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")

    async def scenario():
        async with Server(lambda n: chunked) as server, client() as c:
            texts = [(await fetch(c, server.url)).text for _ in range(2)]
            return texts, server.connections

    assert asyncio.run(scenario()) == (["hello world"] * 2, 2)


def test_a_gzip_encoded_answer_is_decoded_and_repeated_headers_are_joined():
    body = gzip.compress(b"data: packed\n\n" * 1000)

    async def scenario():
        async with Server(lambda n: ok(body, "content-encoding: gzip", "x-a: 1", "X-A: 2")) \
                as server, client() as c:
            return await fetch(c, server.url)

    answer = asyncio.run(scenario())
    assert answer.content == b"data: packed\n\n" * 1000
    assert answer.headers["x-a"] == "1, 2" and answer.headers["content-encoding"] == "gzip"


def test_a_response_left_half_read_closes_its_connection_and_the_next_request_works():
    async def scenario():
        async with Server(lambda n: ok(b"y" * 300_000)) as server, client() as c:
            response = await c.send(c.build_request("GET", server.url))
            async for _ in response.aiter_bytes():
                break  # stop after the first piece
            await response.aclose()
            again = await fetch(c, server.url)
            return len(again.content), server.connections, response.is_closed

    assert asyncio.run(scenario()) == (300_000, 2, True)


def test_a_connection_the_server_closed_while_idle_is_not_reused():
    async def scenario():
        connections = []
        closed = asyncio.Event()

        async def serve(reader, writer):  # one answer (keep-alive implied), then hang up
            connections.append(1)
            await reader.readuntil(b"\r\n\r\n")
            writer.write(ok(f"answer {len(connections)}".encode()))
            await writer.drain()
            writer.close()
            closed.set()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        async with client() as c:
            first = (await fetch(c, url)).text
            await closed.wait()
            [idle] = [conn for conns in c._idle.values() for conn in conns]
            while not idle.reader.at_eof():  # the hang-up reaches the client's loop
                await asyncio.sleep(0.001)
            second = (await fetch(c, url)).text
        server.close()
        return first, second, len(connections)

    assert asyncio.run(scenario()) == ("answer 1", "answer 2", 2)


def test_failures_are_named_as_httpx_names_them_and_worded_as_the_providers_word_them():
    async def scenario():
        failures = []
        async with Server(lambda n: None) as server, client() as c:  # closes unanswered
            with pytest.raises(plain_http.RemoteProtocolError, match="without sending a response"):
                await fetch(c, server.url)
        with pytest.raises(plain_http.ConnectError) as refused:
            await fetch(client(), "http://127.0.0.1:9")
        failures.append(refused.value)
        cut = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\nconnection: close\r\n\r\nshort"
        async with Server(lambda n: cut) as server:  # closes 5 bytes short of its length
            with pytest.raises(plain_http.RemoteProtocolError) as short:
                await fetch(client(), server.url)
        failures.append(short.value)
        for url in ("https://127.0.0.1:9", "http://127.0.0.1:port/"):
            with pytest.raises(plain_http.TransportError) as bad:
                client().build_request("GET", url)
            failures.append(bad.value)
        return [describe_exception(exc) for exc in failures]

    refused, short, https, port = asyncio.run(scenario())
    assert refused[0].startswith("Connection error: ") and refused[1].kind == "retryable"
    assert short[0].startswith("Connection lost: ") and short[1].kind == "retryable"
    assert https[0].startswith("Invalid base URL: ") and https[1].kind == "other"
    assert port[0].startswith("Invalid base URL: ")


def test_a_silent_server_runs_into_the_read_timeout():
    async def scenario():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            async with client(timeout=0.2) as c:
                with pytest.raises(plain_http.ReadTimeout) as silent:
                    await fetch(c, url)
        finally:
            server.close()
        return describe_exception(silent.value)

    message, failure = asyncio.run(scenario())
    assert message == "Request timed out (ReadTimeout)" and failure.kind == "retryable"


def test_requests_beyond_the_connection_limit_wait_for_a_slot():
    async def scenario():
        release = asyncio.Event()
        seen = []

        async def serve(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            seen.append(1)
            await release.wait()
            writer.write(ok())
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        async with client(max_connections=2) as c:
            tasks = [asyncio.ensure_future(fetch(c, url)) for _ in range(3)]
            while len(seen) < 2:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            at_most = len(seen)
            release.set()
            statuses = [r.status_code for r in await asyncio.gather(*tasks)]
        server.close()
        return at_most, statuses

    assert asyncio.run(scenario()) == (2, [200, 200, 200])


def test_an_answer_that_ends_when_the_server_closes_is_read_whole():
    """An HTTP/1.0-style answer: no length, no chunks, the body ends with the connection."""
    async def scenario():
        async def serve(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.0 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
                         b"data: one\n\ndata: two\n\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        async with client() as c:
            text = (await fetch(c, url)).text
            again = (await fetch(c, url)).text  # on a new connection
        server.close()
        return text, again

    assert asyncio.run(scenario()) == ("data: one\n\ndata: two\n\n",) * 2
