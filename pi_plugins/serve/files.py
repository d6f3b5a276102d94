"""``GET /api/sessions/{id}/file?path=P``: a document the agent made (PDF, Word, Excel),
read from the session's folder so the page can show it as an artifact.

Binary content cannot ride in the session's messages the way an HTML code block does,
so the page asks for the file by the path a tool call or the answer names. Only what an
artifact of these kinds needs is served: a regular file under the session's folder
(after symlinks are resolved), with one of the document extensions, of at most
:data:`MAX_DOCUMENT_BYTES`. Anything else is refused with a status that says why.
"""

from __future__ import annotations

import asyncio
import os

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pi_plugins.serve.sessions import RequestError, SessionHost

#: The largest document served (a 20 MB PDF is about 27 MB in the page's tab as base64).
MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
#: The extensions an artifact of a document kind has, and the type each is served as.
DOCUMENT_TYPES = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xls": "application/vnd.ms-excel",
}


def read_document(cwd: str, path: str) -> tuple[bytes, str]:
    """The bytes and type of ``path`` (relative to ``cwd`` or absolute) if it may be served."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in DOCUMENT_TYPES:
        raise RequestError(415, f"not a document artifact: {path!r} (only {', '.join(DOCUMENT_TYPES)})")
    root = os.path.realpath(cwd)
    full = os.path.realpath(os.path.join(root, path))
    if os.path.commonpath([root, full]) != root:
        raise RequestError(403, f"{path!r} is outside the session's folder {root}")
    try:
        with open(full, "rb") as handle:
            if not os.path.isfile(full):
                raise RequestError(404, f"{path!r} is not a file")
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_DOCUMENT_BYTES:
                raise RequestError(413, f"{path!r} is {size:,} bytes; documents are shown up to {MAX_DOCUMENT_BYTES:,}")
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        raise RequestError(404, f"no file {path!r} in {root}") from None
    except IsADirectoryError:
        raise RequestError(404, f"{path!r} is a folder") from None
    except PermissionError:
        raise RequestError(403, f"{path!r} cannot be read") from None
    if len(data) > MAX_DOCUMENT_BYTES:  # grew after the check
        raise RequestError(413, f"{path!r} is over {MAX_DOCUMENT_BYTES:,} bytes")
    return data, DOCUMENT_TYPES[extension]


def file_routes(host: SessionHost) -> list[Route]:
    async def document(request: Request) -> Response:
        served = host.get(request.path_params["id"])
        path = request.query_params.get("path")
        if not path:
            raise RequestError(400, "path is required")
        data, media_type = await asyncio.to_thread(read_document, served.harness.session.cwd, path)
        return Response(data, media_type=media_type, headers={
            "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
            "Content-Disposition": "attachment"})  # bytes for the page's script, never a page

    return [Route("/api/sessions/{id}/file", document, methods=["GET"])]
