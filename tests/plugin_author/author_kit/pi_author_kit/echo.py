"""An in-process provider (no server, no key): it echoes the user's texts since its last
answer, calls a tool when asked ("use NAME"), and summarises when asked to."""

from __future__ import annotations

import json

from pi_core.protocol.messages import text_of
from pi_plugins.providers.kit import MessageBuilder

API = "author-echo"
PROVIDER = "author-echo"


class EchoProvider:
    api = API

    async def stream(self, model, context, options):
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        yield builder.start()
        messages = context.messages
        last = messages[-1] if messages else None
        tools = {t.name for t in context.tools}
        if last is not None and last.role == "user" and "<conversation>" in text_of(last.content):
            answer = "## Goal\nSUMMARY from the echo model"
        elif last is not None and last.role == "toolResult":
            answer = f"echo: the tool said {text_of(last.content)}"
        else:
            since = []
            for message in reversed(messages):
                if message.role == "assistant":
                    break
                if message.role == "user":
                    since.append(text_of(message.content))
            since.reverse()
            words = since[0].split() if since else []
            if len(words) == 2 and words[0] == "use":
                if words[1] in tools:
                    yield builder.toolcall_start("call-1", words[1])
                    yield builder.toolcall_delta(json.dumps({"text": "hey"}))
                    yield builder.close()
                    yield builder.done()
                    return
                answer = f"echo: no tool {words[1]}"
            else:
                answer = "echo: " + " | ".join(since)
            if "GREETING=" in context.system_prompt:
                answer += " [" + context.system_prompt.split("GREETING=", 1)[1].strip() + "]"
            if "tells the time in the author's town" in context.system_prompt:
                answer += " [snippet]"
        yield builder.text_start()
        yield builder.text_delta(answer)
        yield builder.close()
        yield builder.done()
