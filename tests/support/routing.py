"""A router for the scripted LLM server: a parent agent that calls subagent, and its
children (tests of the subagent tool)."""

import json
import threading

from support.llm_server import Reply


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def first_user_text(request) -> str:
    for message in request.body["messages"]:
        if message["role"] == "user":
            return text_of(message["content"])
    return ""


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


class Router:
    """Answers the parent's prompt (``PARENT``) with a subagent call, then a final text;
    answers every child with ``answer: <its task>``. ``gate`` (a barrier) makes the first
    children (as many as it has parties) wait for each other, which only works when they run at the same time; ``hold`` (an
    event) keeps children waiting until it is set."""

    def __init__(self, call: dict, gate: threading.Barrier | None = None,
                 hold: threading.Event | None = None):
        self.call = call
        self.gate = gate
        self.hold = hold
        self.child_requests = []

    def __call__(self, request):
        task = first_user_text(request)
        if task == "PARENT":
            if request.body["messages"][-1]["role"] == "tool":
                return Reply(text="parent done")
            return Reply(tool_calls=[("subagent", self.call, "call_sub")])
        self.child_requests.append(request)
        if self.gate is not None and len(self.child_requests) <= self.gate.parties:
            try:
                self.gate.wait(timeout=10)
            except threading.BrokenBarrierError:
                return Reply(status=400, error="children did not run in parallel")
        if self.hold is not None:
            self.hold.wait(timeout=10)
            return Reply(text="too late")
        return Reply(text=f"answer: {task}", usage={"input": 7, "output": 3})


def header(path) -> dict:
    with open(path) as f:
        return json.loads(f.readline())
