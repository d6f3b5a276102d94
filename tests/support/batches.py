"""A deterministic server script for batch tests and benchmarks: each task lists the
project folder with ``ls``, then answers with what it was asked and what it saw."""

import json
from pathlib import Path

from support.llm_server import Reply


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def lister(request) -> Reply:
    """Turn 1: ``ls`` the folder; turn 2: answer with the prompt and the listing.
    ``fail`` in a prompt gets a 400 error from the server."""
    messages = request.body["messages"]
    prompt = next(_text(m["content"]) for m in messages if m["role"] == "user")
    if "fail" in prompt:
        return Reply(status=400, error=f"the server refuses {prompt!r}")
    if messages[-1]["role"] == "tool":
        listing = _text(messages[-1]["content"]).replace("\n", " ")
        return Reply(text=f"{prompt} saw: {listing}", usage={"input": 20, "output": 4})
    return Reply(text="Looking.", tool_calls=[("ls", {"path": "."})], usage={"input": 10, "output": 2})


def tasks(count: int, cwd: Path, prefix: str = "task") -> list[dict]:
    return [{"id": f"{prefix}-{n:04d}", "prompt": f"{prefix} number {n}", "cwd": str(cwd),
             "tools": ["ls", "read"]} for n in range(count)]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


_VOLATILE = {"id", "parentId", "timestamp", "responseId", "durationMs"}  # durationMs: pi 1.6 timing


def session_contents(path: str) -> list[dict]:
    """A session file's lines without ids, timestamps and durations: what must equal between runs."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return [strip(line) for line in read_jsonl(Path(path))]


def comparable(results: list[dict]) -> dict[str, dict]:
    """Results by id, with their session contents in place of the session path."""
    out = {}
    for r in results:
        r = dict(r)
        r["session"] = session_contents(r["session"]) if r.get("session") else None
        out[r["id"]] = r
    return out
