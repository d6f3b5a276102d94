"""The RPC commands (pi's names and shapes), each a method on :class:`Commands`.

A handler returns the response's ``data`` (``NO_DATA`` for none), raises
:class:`CommandError` (or any error) for a failed response, or returns ``ANSWERED`` when
it wrote its response itself (``prompt`` answers when the prompt is accepted, before the
run's first event, as pi does).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any, Literal, overload

from pi_core.protocol.codec import from_json, to_json
from pi_core.protocol.entries import UnknownEntry
from pi_core.protocol.messages import AssistantMessage, ImageContent, TextContent, Usage, text_of
from pi_plugins.rpc.protocol import NO_DATA, CommandError, failure, success

log = logging.getLogger("pi.rpc")

#: The handler wrote its own response.
ANSWERED = object()
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
QUEUE_MODES = ("all", "one-at-a-time")
#: pi's order for a model object; fields it does not know follow. ``headers`` are left
#: out: they may carry secrets.
MODEL_KEYS = ("id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost",
              "contextWindow", "maxTokens")
MODEL_HIDDEN = ("headers", "apiKeyEnv", "apiKeyEnvs", "bearerEnv", "discovered")


def model_json(model) -> dict | None:
    if model is None:
        return None
    value = to_json(model)
    ordered = {key: value[key] for key in MODEL_KEYS if key in value}
    ordered.update((k, v) for k, v in value.items() if k not in ordered and k not in MODEL_HIDDEN)
    return ordered


class Commands:
    def __init__(self, app, send) -> None:
        self.app = app
        self.harness = app.harness
        self.send = send

    async def handle(self, command: dict) -> None:
        """Run one command and write its response."""
        kind = command.get("type")
        handler = getattr(self, f"cmd_{kind}", None) if isinstance(kind, str) else None
        if handler is None:
            self.send(failure(command, f"Unknown command: {kind}"))
            return
        try:
            data = await handler(command)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, CommandError):
                log.debug("rpc command %s failed", kind, exc_info=True)
            self.send(failure(command, str(exc) or type(exc).__name__))
            return
        if data is not ANSWERED:
            self.send(success(command, data))

    # ------------------------------------------------------------ prompting

    async def cmd_prompt(self, c: dict) -> Any:
        text, images = _string(c, "message"), _images(c)
        behavior = _choice(c, "streamingBehavior", ("steer", "followUp"), required=False)
        accepted = False

        def on_accepted(disposition: str = "started") -> None:
            nonlocal accepted
            accepted = True
            self.send(success(c, {"disposition": disposition}))  # pi 1.6's; 0.73 sent none

        try:
            await self.harness.prompt(text, images, source="rpc", streaming_behavior=behavior,
                                      on_accepted=on_accepted)
        except Exception as exc:
            if not accepted:
                raise
            # After acceptance the event stream tells the story; there is no second response.
            log.warning("prompt %s failed after it was accepted: %s", c.get("id"), exc)
        return ANSWERED

    async def cmd_steer(self, c: dict) -> Any:
        return {"disposition": await self.harness.queue(
            _string(c, "message"), _images(c), behavior="steer", source="rpc")}

    async def cmd_follow_up(self, c: dict) -> Any:
        return {"disposition": await self.harness.queue(
            _string(c, "message"), _images(c), behavior="followUp", source="rpc")}

    async def cmd_abort(self, c: dict) -> Any:
        self.harness.abort()
        await self.harness.wait_for_idle()
        return NO_DATA

    async def cmd_clear_queue(self, c: dict) -> Any:
        """pi 1.6: take the queued messages out and give back their text (a client's Esc
        puts them back in its editor before it aborts)."""
        steering, follow_up = self.harness.clear_queues()
        return {"steering": [_text(m) for m in steering], "followUp": [_text(m) for m in follow_up]}

    async def cmd_new_session(self, c: dict) -> Any:
        parent = _string(c, "parentSession", required=False)
        done = await self.harness.new_session(parent_session=parent)
        return {"cancelled": not done}

    # ------------------------------------------------------------ state

    async def cmd_get_state(self, c: dict) -> Any:
        h = self.harness
        state = {
            "model": model_json(h.model),
            "thinkingLevel": h.thinking_level,
            "isStreaming": h.is_running,
            "isCompacting": h.is_compacting,
            "steeringMode": h.agent.steering.mode,
            "followUpMode": h.agent.follow_up_queue.mode,
            "sessionFile": str(h.session.file) if h.session.file else None,
            "sessionId": h.session.id,
        }
        if h.session.name is not None:
            state["sessionName"] = h.session.name
        state.update({
            "autoCompactionEnabled": bool(h.ctx.settings.get("compaction.enabled", True)),
            "messageCount": len(h.messages),
            "pendingMessageCount": len(h.agent.steering) + len(h.agent.follow_up_queue),
        })
        return state

    async def cmd_get_messages(self, c: dict) -> Any:
        return {"messages": [to_json(m) for m in self.harness.messages]}

    # ------------------------------------------------------------ model and thinking

    async def cmd_set_model(self, c: dict) -> Any:
        provider, model_id = _string(c, "provider"), _string(c, "modelId")
        model = next((m for m in self.app.registry.available()
                      if m.provider == provider and m.id == model_id), None)
        if model is None:
            raise CommandError(f"Model not found: {provider}/{model_id}")
        await self.harness.set_model(model)  # re-clamps the thinking level
        return model_json(model)

    async def cmd_cycle_model(self, c: dict) -> Any:
        cycled = await self.harness.cycle_model()
        if cycled is None:
            return None
        model, _, scoped = cycled
        return {"model": model_json(model), "thinkingLevel": self.harness.thinking_level,
                "isScoped": scoped}

    async def cmd_get_available_models(self, c: dict) -> Any:
        return {"models": [model_json(m) for m in self.app.registry.available()]}

    async def cmd_set_thinking_level(self, c: dict) -> Any:
        level = _choice(c, "level", THINKING_LEVELS)
        await self.harness.set_thinking_level(level)  # clamped to what the model takes
        return NO_DATA

    async def cmd_cycle_thinking_level(self, c: dict) -> Any:
        level = await self.harness.cycle_thinking_level()
        return None if level is None else {"level": level}

    async def cmd_get_available_thinking_levels(self, c: dict) -> Any:
        return {"levels": self.harness.thinking_levels()}

    # ------------------------------------------------------------ queues

    async def cmd_set_steering_mode(self, c: dict) -> Any:
        self.harness.agent.steering.mode = _choice(c, "mode", QUEUE_MODES)
        return NO_DATA

    async def cmd_set_follow_up_mode(self, c: dict) -> Any:
        self.harness.agent.follow_up_queue.mode = _choice(c, "mode", QUEUE_MODES)
        return NO_DATA

    # ------------------------------------------------------------ compaction and retries

    async def cmd_compact(self, c: dict) -> Any:
        instructions = _string(c, "customInstructions", required=False)
        if self.harness.is_running:  # as pi: a manual compaction stops the run first
            self.harness.abort()
            await self.harness.wait_for_idle()
        ends = []
        unsubscribe = self.harness.subscribe(
            lambda event: ends.append(event) if event.type == "compaction_end" else None)
        try:
            result = await self.harness.compact(instructions)
        finally:
            unsubscribe()
        if result is None:
            end = ends[-1] if ends else None
            if end is not None and end.error_message:
                raise CommandError(f"Compaction failed: {end.error_message}")
            if end is not None and end.aborted:
                raise CommandError("Compaction cancelled")
            raise CommandError("Nothing to compact (session too small)")
        return to_json(result)

    async def cmd_set_auto_compaction(self, c: dict) -> Any:
        self.harness.ctx.settings.set("compaction.enabled", _bool(c, "enabled"))
        return NO_DATA

    async def cmd_set_auto_retry(self, c: dict) -> Any:
        self.harness.ctx.settings.set("retry.enabled", _bool(c, "enabled"))
        return NO_DATA

    async def cmd_abort_retry(self, c: dict) -> Any:
        h = self.harness
        if h.is_running and not h.agent.is_running:  # between runs: a retry's wait
            h.abort()
        return NO_DATA

    # ------------------------------------------------------------ the user's shell

    async def cmd_bash(self, c: dict) -> Any:
        exclude = c.get("excludeFromContext") is True  # pi 1.6: kept, but not sent to the model
        message = await self.harness.run_bash(_string(c, "command"), exclude_from_context=exclude,
                                              on_output=self._stream_bash_output(c.get("id")))
        if message is None:  # a user_bash plugin cancelled it
            return {"output": "", "cancelled": True, "truncated": False}
        data = {"output": message.output}
        if message.exit_code is not None:
            data["exitCode"] = message.exit_code
        data.update(cancelled=bool(message.cancelled), truncated=bool(message.truncated))
        if message.full_output_path:
            data["fullOutputPath"] = message.full_output_path
        return data

    def _stream_bash_output(self, command_id: Any) -> Any:
        """pi 1.6's ``bash_execution_update``: each new piece of the command's output as it
        arrives, with the command's ``id`` when it had one."""
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        seen = 0

        def on_output(output: Any) -> None:
            nonlocal seen
            new, seen = output.total_bytes - seen, output.total_bytes
            delta = decoder.decode(output.recent(new))
            if delta:
                event = {"type": "bash_execution_update", "delta": delta}
                self.send({**event, "id": command_id} if command_id is not None else event)

        return on_output

    async def cmd_abort_bash(self, c: dict) -> Any:
        self.harness.abort_bash()
        return NO_DATA

    # ------------------------------------------------------------ sessions

    async def cmd_get_session_stats(self, c: dict) -> Any:
        from pi_core.protocol.messages import AssistantMessage

        stats = self.harness.stats()
        # a server that reports no usage (llama-cpp-python): the counts are our estimate
        if any(isinstance(m, AssistantMessage) and is_estimated(m.usage) for m in self.harness.agent.messages):
            stats["tokens"]["estimated"] = True
        return stats

    async def cmd_export_html(self, c: dict) -> Any:
        output = _string(c, "outputPath", required=False)
        try:
            from pi_plugins.export_html import export_html
        except ImportError as exc:
            raise CommandError("HTML export is not available: the export_html plugin is "
                               f"not installed ({exc})") from exc
        if output is not None:
            output = self._path(output)
        return {"path": str(export_html(self.harness.session, output, tools=self.harness.agent.tools))}

    async def cmd_switch_session(self, c: dict) -> Any:
        path = self._path(_string(c, "sessionPath"))
        if not Path(path).is_file():
            raise CommandError(f"Session file not found: {path}")
        done = await self.harness.switch_session(path)
        return {"cancelled": not done}

    async def cmd_fork(self, c: dict) -> Any:
        text, cancelled = await self.harness.fork(_string(c, "entryId"))
        return {"text": text, "cancelled": cancelled}

    async def cmd_clone(self, c: dict) -> Any:
        if self.harness.session.leaf_id is None:
            raise CommandError("Cannot clone session: no current entry selected")
        done = await self.harness.clone()
        return {"cancelled": not done}

    async def cmd_get_entries(self, c: dict) -> Any:
        """pi 1.6: every entry in file order, or those after the entry ``since`` (an id is
        a cursor that holds across restarts: the file only grows)."""
        entries = self.harness.session.entries
        since = _string(c, "since", required=False)
        if since is not None:
            at = next((i for i, e in enumerate(entries) if e.id == since), None)
            if at is None:
                raise CommandError(f"Entry not found: {since}")
            entries = entries[at + 1:]
        return {"entries": [_entry_json(e) for e in entries], "leafId": self.harness.session.leaf_id}

    async def cmd_get_tree(self, c: dict) -> Any:
        """pi 1.6: the session as a tree (a list: there may be several roots)."""
        return {"tree": [_node_json(n) for n in self.harness.session.tree()],
                "leafId": self.harness.session.leaf_id}

    async def cmd_get_fork_messages(self, c: dict) -> Any:
        return {"messages": [{"entryId": entry_id, "text": text}
                             for entry_id, text in self.harness.fork_messages() if text]}

    # Workspace checkpoints (our addition; pi has none): the checkpoints plugin's.

    async def cmd_get_checkpoints(self, c: dict) -> Any:
        return [checkpoint.to_json() for checkpoint in await self.harness.checkpoints()]

    async def cmd_restore_checkpoint(self, c: dict) -> Any:
        return (await self.harness.restore_checkpoint(_string(c, "entryId"))).to_json()

    async def cmd_get_last_assistant_text(self, c: dict) -> Any:
        for message in reversed(self.harness.messages):
            if not isinstance(message, AssistantMessage):
                continue
            if message.stop_reason == "aborted" and not message.content:
                continue
            text = "".join(b.text for b in message.content if isinstance(b, TextContent)).strip()
            return {"text": text or None}
        return {"text": None}

    async def cmd_set_session_name(self, c: dict) -> Any:
        name = _string(c, "name").strip()
        if not name:
            raise CommandError("Session name cannot be empty")
        await self.harness.set_session_name(name)  # sends session_info_changed
        return NO_DATA

    # ------------------------------------------------------------ commands

    async def cmd_get_commands(self, c: dict) -> Any:
        commands = []
        rank = {"extension": 0, "prompt": 1, "skill": 2}  # pi's order: plugins, templates, skills
        found = sorted(await self.harness.commands(), key=lambda c: rank.get(c.source, 0))
        for command in found:
            entry = {"name": command.name}
            if command.description:
                entry["description"] = command.description
            entry["source"] = command.source
            entry["sourceInfo"] = command.source_info or self._plugin_source_info(command)
            commands.append(entry)
        return {"commands": commands}

    def _plugin_source_info(self, command) -> dict:
        """Where a plugin's command comes from: the plugin that defines its handler."""
        module = getattr(command.handler, "__module__", None)
        infos = self.app.plugins.infos
        info = next((i for i in infos if getattr(i.plugin, "__name__", None) == module), None)
        if info is None and module:
            info = next((i for i in infos if module.startswith(f"{getattr(i.plugin, '__name__', '')}.")), None)
        if info is None:
            return {"path": module or "<unknown>", "source": "extension", "scope": "temporary",
                    "origin": "top-level"}
        path = info.location or info.name
        if info.source == "builtin":  # as pi 1.6 describes its built-in extensions' commands
            return {"path": f"builtin:{info.name}", "source": "builtin", "scope": "temporary",
                    "origin": "top-level"}
        if info.source == "cli":
            return {"path": path, "source": "cli", "scope": "temporary", "origin": "top-level"}
        if info.source in ("file", "settings"):
            project = Path(self.harness.ctx.cwd) / ".pi"
            in_project = Path(path).is_relative_to(project)
            base = project if in_project else Path(self.harness.ctx.agent_dir or Path(path).parent)
            return {"path": path, "source": "auto" if info.source == "file" else "local",
                    "scope": "project" if in_project else "user", "origin": "top-level",
                    "baseDir": str(base)}
        # a package's entry point, or built in
        return {"path": path, "source": info.distribution or info.source, "scope": "user",
                "origin": "package"}

    def _path(self, path: str) -> str:
        return os.path.join(self.harness.ctx.cwd, os.path.expanduser(path))


# ---------------------------------------------------------------- values


def _text(message) -> str:
    return text_of(getattr(message, "content", "") or "")


def _entry_json(entry) -> dict:
    return entry.data if isinstance(entry, UnknownEntry) else to_json(entry)


def _node_json(node) -> dict:
    """A tree node as pi 1.6 sends it, children first written depth-first without
    recursion (a long session's tree is as deep as it is long)."""
    out: dict = {}
    stack = [(node, out)]
    while stack:
        current, value = stack.pop()
        value["entry"] = _entry_json(current.entry)
        value["children"] = [{} for _ in current.children]
        if current.label is not None:
            value["label"] = current.label
            if current.label_timestamp is not None:
                value["labelTimestamp"] = current.label_timestamp
        stack.extend(zip(current.children, value["children"], strict=True))
    return out


# ---------------------------------------------------------------- arguments


@overload
def _string(c: dict, name: str, required: Literal[True] = True) -> str: ...


@overload
def _string(c: dict, name: str, required: bool) -> str | None: ...


def _string(c: dict, name: str, required: bool = True) -> str | None:
    value = c.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise CommandError(f"{c.get('type')}: {name!r} must be a string"
                           + ("" if value is not None else " (missing)"))
    return value


def _bool(c: dict, name: str) -> bool:
    value = c.get(name)
    if not isinstance(value, bool):
        raise CommandError(f"{c.get('type')}: {name!r} must be true or false")
    return value


def _choice(c: dict, name: str, choices: tuple[str, ...], required: bool = True) -> str | None:
    value = c.get(name)
    if value is None and not required:
        return None
    if value not in choices:
        raise CommandError(f"{c.get('type')}: {name!r} must be one of "
                           f"{', '.join(repr(x) for x in choices)} (got {value!r})")
    return value


def _images(c: dict) -> list[ImageContent]:
    raw = c.get("images")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CommandError(f"{c.get('type')}: 'images' must be a list of image contents")
    images = []
    for n, value in enumerate(raw):
        if not (isinstance(value, dict) and value.get("type") == "image"
                and isinstance(value.get("data"), str) and isinstance(value.get("mimeType"), str)):
            raise CommandError(f"{c.get('type')}: images[{n}] must be "
                               '{"type": "image", "data": base64, "mimeType": "image/..."}')
        images.append(from_json(value, ImageContent))
    return images


def is_estimated(usage: Usage) -> bool:
    """Whether ``usage`` is an estimate of ours (``"estimated": true`` beside its
    counts), not what the server reported."""
    extra = usage._extra
    return bool(extra and extra.get("estimated"))
