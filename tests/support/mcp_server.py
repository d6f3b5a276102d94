"""A tiny MCP server of our own for the MCP tests, on the ``mcp`` SDK's FastMCP
(``MCPServer`` in mcp 2): ``python mcp_server.py`` speaks stdio, ``--http PORT`` streamable
HTTP on 127.0.0.1. It writes its pid to ``$PID_FILE`` when that is set.

Tools: ``add`` (annotated read-only, idempotent, closed world), ``dot`` (a one-pixel PNG), ``fail`` (an error result), ``whoami`` (the
``DEMO_TOKEN`` variable and the folder it runs in), ``crash`` (the process ends mid-call),
``big`` (N characters of text), ``get-tiny-image`` (a name with dashes), ``structured``
(structuredContent), ``auth`` (the request's Authorization header, over HTTP) and
``learn`` (adds the tool ``late``, withdraws ``fail`` and says the list changed).

Resources: ``demo://readme`` (text), ``demo://dot.png`` (an image), ``demo://data.bin``
(bytes), and two MCP App ones that hosts which do not render them leave out
(``ui://demo/app`` and ``demo://app.html``, ``text/html;profile=mcp-app``); one template,
``demo://notes/{name}``.
"""

import base64
import os
import pathlib
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ToolAnnotations

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

if os.environ.get("PID_FILE"):
    pathlib.Path(os.environ["PID_FILE"]).write_text(str(os.getpid()))
server = MCPServer("demo", instructions="Demo tools for the tests.\nSecond line.")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def dot() -> Image:
    """A one-pixel PNG."""
    return Image(data=base64.b64decode(PNG), format="png")


@server.tool()
def fail(why: str = "no reason") -> str:
    """Always fails."""
    raise ValueError("boom: " + why)


@server.tool()
def whoami() -> str:
    """The token from the environment and the folder the server runs in."""
    return os.environ.get("DEMO_TOKEN", "-") + " in " + os.getcwd()


@server.tool()
def crash() -> str:
    """Ends the server process."""
    os._exit(3)


@server.tool()
def big(size: int) -> str:
    """Returns SIZE characters of text, in lines of 100."""
    line = "0123456789" * 10
    text = "\n".join(line for _ in range(size // 101 + 1))
    return text[:size]


@server.tool(name="get-tiny-image")
def tiny() -> str:
    """A name with dashes."""
    return "tiny"


@server.tool()
def structured(n: int) -> dict:
    """Returns structured content."""
    return {"n": n, "square": n * n}


@server.tool()
def auth(ctx: Context) -> str:
    """The Authorization header of the request (HTTP only)."""
    headers = ctx.headers or {}
    return headers.get("authorization", "-")


def late() -> str:
    """Added by learn."""
    return "late"


@server.tool()
async def learn(ctx: Context) -> str:
    """Adds the tool late, withdraws fail."""
    server.add_tool(late)
    server.remove_tool("fail")
    await ctx.session.send_tool_list_changed()
    return "learned"


@server.resource("demo://readme", name="readme", description="What the demo server is for.",
                 mime_type="text/plain")
def readme() -> str:
    return "The demo server answers the MCP tests."


@server.resource("demo://dot.png", name="dot", mime_type="image/png")
def dot_png() -> bytes:
    return base64.b64decode(PNG)


@server.resource("demo://data.bin", name="data", mime_type="application/octet-stream")
def data() -> bytes:
    return bytes(range(16))


@server.resource("ui://demo/app", name="app", mime_type="text/html")
def app() -> str:
    return "<p>an MCP App</p>"


@server.resource("demo://app.html", name="app-html", mime_type="text/html;profile=mcp-app")
def app_html() -> str:
    return "<p>an MCP App</p>"


@server.resource("demo://notes/{name}", name="note", description="A note by name.", mime_type="text/plain")
def note(name: str) -> str:
    return f"Note {name}."


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
