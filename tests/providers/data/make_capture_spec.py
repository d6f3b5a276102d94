import json

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
def asst(api, provider, model, content, stop="toolUse", **kw):
    d = {"role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
         "usage": usage, "stopReason": stop, "timestamp": 1700000000000}
    d.update(kw)
    return d
def result(cid, name, content, is_error=False):
    return {"role": "toolResult", "toolCallId": cid, "toolName": name, "content": content,
            "isError": is_error, "timestamp": 1700000000000}
reasoning_item = {"type": "reasoning", "id": "rs_abc123", "summary": [{"type": "summary_text", "text": "Plan the listing."}], "encrypted_content": "ENCRYPTED=="}
tools = [
  {"name": "read", "description": "Read a file", "parameters": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "required": ["path"], "properties": {"path": {"type": "string", "description": "file path"}, "limit": {"type": "number"}}, "additionalProperties": False}},
  {"name": "bash", "description": "Run a command", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
]
cross = [
  {"role": "user", "content": [{"type": "text", "text": "Look at this picture and the files."}, {"type": "image", "data": PNG, "mimeType": "image/png"}], "timestamp": 1},
  asst("anthropic-messages", "anthropic", "claude-sonnet-4-5", [
      {"type": "thinking", "thinking": "I should list files.", "thinkingSignature": "sig-anthropic-1"},
      {"type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "REDACTEDDATA", "redacted": True},
      {"type": "text", "text": "Listing files."},
      {"type": "toolCall", "id": "toolu_01A", "name": "bash", "arguments": {"command": "ls"}}]),
  result("toolu_01A", "bash", [{"type": "text", "text": "a.txt\nshot.png"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]),
  asst("openai-completions", "groq", "llama-3.3-70b-versatile", [
      {"type": "thinking", "thinking": "Read a.txt next.", "thinkingSignature": "reasoning_content"},
      {"type": "text", "text": "Reading a.txt."},
      {"type": "toolCall", "id": "call_groq_1", "name": "read", "arguments": {"path": "a.txt"}}]),
  result("call_groq_1", "read", [{"type": "text", "text": "hello"}]),
  asst("openai-responses", "openai", "gpt-5", [
      {"type": "thinking", "thinking": "Plan the listing.", "thinkingSignature": json.dumps(reasoning_item, separators=(",", ":"))},
      {"type": "text", "text": "Checking again.", "textSignature": "{\"v\":1,\"id\":\"msg_resp_1\"}"},
      {"type": "toolCall", "id": "call_resp_1|fc_resp_1", "name": "bash", "arguments": {"command": "pwd"}}]),
  result("call_resp_1|fc_resp_1", "bash", [{"type": "text", "text": "/work"}]),
  asst("google-generative-ai", "google", "gemini-2.5-flash", [
      {"type": "thinking", "thinking": "Gemini thinks.", "thinkingSignature": "Z2VtaW5pc2ln"},
      {"type": "text", "text": "Almost done."},
      {"type": "toolCall", "id": "read_1700_1", "name": "read", "arguments": {"path": "b.txt"}, "thoughtSignature": "Z2VtaW5pc2ln"}]),
  result("read_1700_1", "read", [{"type": "text", "text": "missing"}], True),
  asst("anthropic-messages", "anthropic", "claude-sonnet-4-5", [{"type": "text", "text": "partial"}], stop="aborted", errorMessage="Request was aborted"),
  asst("anthropic-messages", "anthropic", "claude-sonnet-4-5", [
      {"type": "toolCall", "id": "toolu_orphan", "name": "bash", "arguments": {"command": "date"}}]),
  {"role": "user", "content": "Summarise.", "timestamp": 2},
]
simple = [{"role": "user", "content": "Hi there", "timestamp": 1}]
contexts = {
  "cross": {"systemPrompt": "You are helpful.", "messages": cross, "tools": tools},
  "simple": {"systemPrompt": "Be brief.", "messages": simple},
  "simple_tools": {"systemPrompt": "Be brief.", "messages": simple, "tools": tools},
}
def M(id, api, provider, reasoning, inp, base="http://127.0.0.1:PORT/v1", maxTokens=16384, **kw):
    d = {"id": id, "name": id, "api": api, "provider": provider, "baseUrl": base, "reasoning": reasoning,
         "input": inp, "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 1.5},
         "contextWindow": 200000, "maxTokens": maxTokens}
    d.update(kw)
    return d
claude = M("claude-sonnet-4-5", "anthropic-messages", "anthropic", True, ["text", "image"], base="http://127.0.0.1:PORT", maxTokens=64000)
gpt5 = M("gpt-5", "openai-responses", "openai", True, ["text", "image"], maxTokens=128000, thinkingLevelMap={"off": None})
gpt4o = M("gpt-4o", "openai-responses", "openai", False, ["text", "image"])
gemini = M("gemini-2.5-flash", "google-generative-ai", "google", True, ["text", "image"], base="http://127.0.0.1:PORT/v1beta", maxTokens=65536)
llama = M("llama-3.3-70b-versatile", "openai-completions", "groq", False, ["text"], maxTokens=32768)
local = M("local-model", "openai-completions", "local", True, ["text", "image"])
grok = M("grok-4", "openai-completions", "xai", True, ["text"], maxTokens=64000)
orclaude = M("anthropic/claude-sonnet-4", "openai-completions", "openrouter", True, ["text", "image"], maxTokens=64000)
dsk = M("deepseek-v4-pro", "openai-completions", "deepseek", True, ["text"], maxTokens=64000)
cases = []
for name, model in [("anthropic", claude), ("responses", gpt5), ("google", gemini), ("completions_text_only", llama), ("completions_local", local)]:
    cases.append({"name": f"cross_{name}_think", "model": model, "context": "cross", "options": {"reasoning": "medium", "sessionId": "sess-1"}})
    cases.append({"name": f"cross_{name}_off", "model": model, "context": "cross", "options": {"sessionId": "sess-1"}})
for name, model in [("anthropic", claude), ("responses", gpt5), ("responses4o", gpt4o), ("google", gemini), ("completions", llama), ("local", local), ("grok", grok), ("openrouter", orclaude), ("deepseek", dsk)]:
    for lvl in ["off", "minimal", "low", "high", "xhigh"]:
        opts = {"temperature": 0.5, "maxTokens": 1000}
        if lvl != "off": opts["reasoning"] = lvl
        cases.append({"name": f"simple_{name}_{lvl}", "model": model, "context": "simple_tools", "options": opts})
json.dump({"contexts": contexts, "cases": cases}, open("spec.json", "w"), indent=1)
