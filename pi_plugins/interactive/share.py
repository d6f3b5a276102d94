"""``/share``: the session as a Radius artifact or as a secret GitHub gist.

Where it goes is ``sessionShareDestination`` (pi 1.6): ``auto`` (the default) uploads to
Radius when there is a Radius sign-in or key, else makes a gist; ``gist`` always makes a
gist; ``radius`` never falls back to one. Radius gets the current branch as JSONL (as
``/export x.jsonl``) ending with a ``pi.share`` entry that carries the system prompt and
the tools for the viewer, posted to ``https://radius.pi.dev/v1/artifacts`` for the
organization to see (``PI_PROVIDER_ORIGINS`` moves it, for tests).

The gist
The gist is created through GitHub's REST API (``POST {api}/gists``, ``public: false``)
with ``GITHUB_TOKEN`` (or ``GH_TOKEN``), else the token of a logged-in ``gh``. The API's
origin is ``https://api.github.com``, or ``PI_GITHUB_API_URL`` (GitHub Enterprise, tests).
As pi, the link printed first opens the gist in pi's session viewer
(``PI_SHARE_VIEWER_URL``), the second is the gist itself.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort

API = "https://api.github.com"
RADIUS = "https://radius.pi.dev"
DESTINATIONS = ("auto", "gist", "radius")
VIEWER = "https://pi.dev/session/"


class ShareError(Exception):
    """Why the gist could not be made, in words for the user."""


async def github_token(env=os.environ) -> str | None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        if env.get(name):
            return env[name]
    if shutil.which("gh") is None:
        return None
    try:
        process = await asyncio.create_subprocess_exec(
            "gh", "auth", "token", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            stdin=asyncio.subprocess.DEVNULL)
        out, _ = await asyncio.wait_for(process.communicate(), 10)
    except (TimeoutError, OSError):
        return None
    token = out.decode().strip()
    return token if process.returncode == 0 and token else None


async def create_gist(html: str, token: str, *, description: str, api: str | None = None) -> dict:
    """The created gist (GitHub's JSON, with ``id`` and ``html_url``)."""
    import httpx

    origin = (api or os.environ.get("PI_GITHUB_API_URL") or API).rstrip("/")
    body = {"description": description, "public": False, "files": {"session.html": {"content": html}}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
               "X-GitHub-Api-Version": "2022-11-28"}
    try:
        async with httpx.AsyncClient(timeout=60) as client:
            response = await client.post(f"{origin}/gists", json=body, headers=headers)
    except httpx.HTTPError as exc:
        raise ShareError(f"cannot reach {origin}: {exc}") from None
    if response.status_code >= 400:
        try:
            message = response.json().get("message") or response.text
        except ValueError:
            message = response.text
        raise ShareError(f"{origin} answered {response.status_code}: {message.strip()[:300]}")
    try:
        gist = response.json()
        gist["id"], gist["html_url"]
    except (ValueError, KeyError, TypeError):
        raise ShareError(f"{origin} did not answer with a gist") from None
    return gist


async def radius_token() -> str | None:
    """The Radius sign-in's token (refreshed when due), else a stored key or ``RADIUS_API_KEY``."""
    from pi_plugins.signin.common import auth_storage

    store = auth_storage()
    try:
        token = await store.refreshed_key("radius")
    except Exception:  # noqa: BLE001 (an expired sign-in: as none, so auto takes a gist)
        token = None
    return token or store.api_key("radius", os.environ) or os.environ.get("RADIUS_API_KEY") or None


def share_entries(tui: ChatPort, parent: str | None, timestamp: str) -> list[dict]:
    """pi 1.6's trailing ``pi.share`` entry: what the viewer shows beside the messages."""
    import uuid

    tools = [{"name": t.name, "description": t.description, "parameters": t.parameters}
             for t in tui.harness.agent.tools]
    return [{"type": "custom", "customType": "pi.share", "id": uuid.uuid4().hex[:8], "parentId": parent,
             "timestamp": timestamp, "data": {"systemPrompt": tui.harness.agent.system_prompt, "tools": tools}}]


async def share_via_radius(tui: ChatPort, token: str) -> None:
    import httpx

    from pi_plugins.export_jsonl import branch_jsonl
    from pi_plugins.providers.origins import rewrite

    try:
        body = branch_jsonl(tui.harness.session, lambda parent, at: share_entries(tui, parent, at)).encode()
    except (OSError, ValueError) as exc:
        tui.add_text(f"Failed to export session: {exc}", "error")
        return
    url = rewrite(f"{RADIUS}/v1/artifacts?visibility=organization&title=Pi+session")
    tui.set_working("Uploading to Radius...")
    try:
        async with httpx.AsyncClient(timeout=120) as client:
            response = await client.post(url, content=body, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"})
        try:
            answer = response.json()
        except ValueError:
            answer = None
    except httpx.HTTPError as exc:
        tui.add_text(f"Failed to upload Radius artifact: {exc or type(exc).__name__}", "error")
        return
    finally:
        tui.set_working(None)
    artifact = answer.get("artifact") if isinstance(answer, dict) else None
    if not response.is_success or not isinstance(artifact, dict) or not artifact.get("canonical_url"):
        why = (answer.get("error") if isinstance(answer, dict) else None) or response.reason_phrase \
            or response.status_code
        tui.add_text(f"Failed to upload Radius artifact: {why}", "error")
        return
    tui.add_text(f"Share URL: {artifact['canonical_url']}", "none")


async def share(tui: ChatPort, args: str) -> None:
    from pi_plugins.export_html import ExportError, export_html

    destination = tui.settings.get("sessionShareDestination", "auto")
    destination = destination if destination in DESTINATIONS else "auto"  # as pi 1.6 reads it
    if destination != "gist":
        radius = await radius_token()
        if radius is not None:
            await share_via_radius(tui, radius)
            return
        if destination == "radius":
            tui.add_text("Radius authentication is not configured. Run '/login radius' first.", "error")
            return
    token = await github_token()
    if token is None:
        tui.add_text("Cannot share: set GITHUB_TOKEN, or log in with 'gh auth login'.", "error")
        return
    with tempfile.TemporaryDirectory(prefix="pi-share-") as folder:
        path = Path(folder) / "session.html"
        try:
            export_html(tui.harness.session, path, tools=tui.harness.agent.tools)
            html = path.read_text(encoding="utf-8")
        except (ExportError, OSError) as exc:
            tui.add_text(f"Failed to export session: {exc}", "error")
            return
    tui.set_working("Creating gist...")
    try:
        name = tui.harness.session.name
        gist = await create_gist(html, token, description=f"pi session{': ' + name if name else ''}")
    except ShareError as exc:
        tui.add_text(f"Failed to create gist: {exc}", "error")
        return
    finally:
        tui.set_working(None)
    viewer = os.environ.get("PI_SHARE_VIEWER_URL") or VIEWER
    tui.add_text(f"Share URL: {viewer}#{gist['id']}\nGist: {gist['html_url']}", "none")
