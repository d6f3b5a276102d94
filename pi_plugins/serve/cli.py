"""``pi serve`` and ``pi connect`` on the command line (imported only when one runs)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import socket
import sys
from typing import TYPE_CHECKING, Any

import click

from pi_plugins.serve.limits import Limits

if TYPE_CHECKING:
    from pi_plugins.serve.sessions import SessionHost

INSTALL_HINT = "pip install 'pi-harness[serve]'"
DEFAULT_PORT = 8765


def missing_dependencies(*modules: str) -> str | None:
    """What to say when a module of the ``serve`` extra is not installed, else None."""
    from importlib.util import find_spec

    absent = [m for m in modules if find_spec(m) is None]
    if not absent:
        return None
    return (f"this needs {', '.join(absent)}, which {'is' if len(absent) == 1 else 'are'} not "
            f"installed: {INSTALL_HINT}")


def event_loop() -> asyncio.Runner:
    """The runner of the server's event loop: uvloop's where it is installed (the serve
    extra has it: with 100 sessions streaming it halves the delay from a model's chunk to
    the clients), else asyncio's. ``pi serve``, ``pi connect`` and the tests all use it."""
    try:
        import uvloop
    except ImportError:
        return asyncio.Runner()
    return asyncio.Runner(loop_factory=uvloop.new_event_loop)


def serve_url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/#token={token}"


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: a free one)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class Serving:
    """One running server: :meth:`start` listens and serves in the background, :meth:`stop`
    (a signal, or a test) ends it; :meth:`wait` closes every session and returns 0."""

    def __init__(self, host: str, port: int, token: str, *, cwd: str | None = None,
                 approve: bool | None = None, limits: Limits | None = None) -> None:
        self.host, self.port, self.token, self.cwd, self.approve = host, port, token, cwd, approve
        self.limits = limits or Limits()
        self.url: str | None = None
        self.sessions: SessionHost | None = None
        self._server: Any = None  # uvicorn's Server (uvicorn is imported by start)
        self._task: asyncio.Task | None = None
        self._socket: socket.socket | None = None

    async def start(self) -> str:
        import uvicorn

        from pi_plugins.keys.rules import hold_secret
        from pi_plugins.serve.app import create_app
        from pi_plugins.serve.limits import guarded_protocol
        from pi_plugins.serve.sessions import SessionHost

        # redacted like a provider's key from what a tool gives back (a bash call reading
        # /proc/$PPID/environ or the token file), so the model never sees it
        hold_secret(self.token, "PI_SERVE_TOKEN")
        sessions = self.sessions = await SessionHost.load(cwd=self.cwd, approve=self.approve)
        # What start-up made (modules, plugins, the model catalogue) lives as long as the
        # server: kept out of the collector's full passes, which otherwise walk it all
        # and stall every stream for tens of milliseconds (the p99 of bench_serve.py).
        gc.freeze()
        app = create_app(sessions, token=self.token, bind_host=self.host)
        listening = self._socket = listen(self.host, self.port)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                http=guarded_protocol(self.limits),  # request timeout, per-address caps
                                timeout_graceful_shutdown=5, ws_max_size=64 * 1024 * 1024,
                                # frames are small and mostly local: compressing them costs
                                # more CPU (both ends) and latency than it saves
                                ws_per_message_deflate=False)
        self._server = _server_class()(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[listening]))
        sessions.check_settings(sessions.cwd)  # packages install while it serves
        url = self.url = serve_url(self.host, listening.getsockname()[1], self.token)
        return url

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True

    async def wait(self) -> int:
        assert self._task is not None and self.sessions is not None and self._socket is not None, \
            "start() first"
        try:
            await self._task
        finally:
            from pi_plugins.keys.rules import release_secret

            await self.sessions.close_all()
            self._socket.close()
            release_secret(self.token)
        return 0


async def serve(host: str, port: int, token: str, *, cwd: str | None = None, out=None,
                approve: bool | None = None) -> int:
    """Run the server until SIGINT or SIGTERM, then close every session; 0."""
    serving = Serving(host, port, token, cwd=cwd, approve=approve)
    url = await serving.start()
    loop = asyncio.get_running_loop()
    caught = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, serving.stop)
            caught.append(signum)
    out = out or sys.stdout
    out.write(f"pi serve: {url}\n")
    out.flush()
    try:
        return await serving.wait()
    finally:
        for signum in caught:
            loop.remove_signal_handler(signum)


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server without its own signal handling: :func:`serve` catches the
        signals, so the process exits 0 (uvicorn re-raises the signal it caught once
        it has stopped)."""

        @contextlib.contextmanager
        def capture_signals(self):
            yield

    return Server


#: What ``--token`` gets: a token in argv is readable by every user of the machine.
ARGV_TOKEN = ("a token on the command line is readable by every user of this machine (ps); "
              "leave it out: {where}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    import ipaddress

    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback by default; anything else needs --allow-remote).")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port (0: a free one).")
@click.option("--allow-remote", is_flag=True,
              help="Listen on a --host other machines can reach (anyone with the token runs commands as you).")
@click.option("--token", hidden=True, help="Refused: set PI_SERVE_TOKEN, or let pi serve keep the token in its file.")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or ignore) the sessions' project .pi resources and extensions while serving.")
def serve_command(host: str, port: int, allow_remote: bool, token: str | None, approve: bool | None) -> None:
    """Serve sessions: an HTTP API, pi's RPC over WebSockets, and a web page at /.
    Prints one line, `pi serve: http://HOST:PORT/#token=TOKEN`, once it listens. The token
    is PI_SERVE_TOKEN, else the one kept in <agent dir>/serve-token (0600)."""
    from pi_plugins.serve.token import ENV, server_token, token_file

    if token is not None:
        where = f"pi serve uses {ENV}, else the token it keeps in {token_file()}"
        click.echo(f"pi serve: --token refused: {ARGV_TOKEN.format(where=where)}", err=True)
        sys.exit(2)
    if not is_loopback(host):
        if not allow_remote:
            click.echo(f"pi serve: --host {host} is reachable from other machines, and anyone there "
                       "with the token runs commands as you; add --allow-remote if you mean it", err=True)
            sys.exit(2)
        click.echo(f"pi serve: warning: listening on {host}, reachable from other machines; the "
                   "connection is not encrypted (put it behind TLS) and the token gives a shell as you",
                   err=True)
    problem = missing_dependencies("starlette", "uvicorn", "websockets")
    if problem:
        click.echo(f"pi serve: {problem}", err=True)
        sys.exit(2)
    try:
        token, _ = server_token(warn=lambda text: click.echo(f"pi serve: {text}", err=True))
    except OSError as exc:
        click.echo(f"pi serve: cannot keep the token in {token_file()}: {exc.strerror or exc}", err=True)
        sys.exit(1)

    try:
        with event_loop() as runner:
            sys.exit(runner.run(serve(host, port, token, approve=approve)))
    except OSError as exc:
        click.echo(f"pi serve: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        sys.exit(1)


@click.command("connect")
@click.argument("url")
@click.option("--session", "session_id", required=True, metavar="ID", help="The live session's id.")
@click.option("--token", hidden=True, help="Refused: the token is found in PI_SERVE_TOKEN or pi serve's file.")
@click.option("--since", type=int, help="First replay the session's held events after this seq.")
def connect_command(url: str, session_id: str, token: str | None, since: int | None) -> None:
    """Bridge stdin and stdout to a served session's WebSocket: one JSON object per
    line, exactly as `pi --mode rpc` speaks. The token: PI_SERVE_TOKEN, else the one
    `pi serve` keeps in <agent dir>/serve-token (same machine, same user)."""
    from pi_plugins.serve.token import ENV, token_file

    where = f"pi connect finds it in {ENV} or in {token_file()}"
    if token is not None:
        click.echo(f"pi connect: --token refused: {ARGV_TOKEN.format(where=where)}", err=True)
        sys.exit(2)
    if "token=" in url.partition("#")[2]:
        click.echo(f"pi connect: warning: {ARGV_TOKEN.format(where=where)}", err=True)
    problem = missing_dependencies("websockets")
    if problem:
        click.echo(f"pi connect: {problem}", err=True)
        sys.exit(2)
    from pi_plugins.serve.connect import ConnectError, bridge, socket_url

    try:
        target = socket_url(url, session_id, None, since)
        with event_loop() as runner:
            sys.exit(runner.run(bridge(target)))
    except ConnectError as exc:
        click.echo(f"pi connect: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
