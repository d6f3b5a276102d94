"""``mcp.log`` in the agent dir: the log messages servers send
(``notifications/message``), one line each as pi 1.6 writes them
(``<time> [<server>] <level> <logger>: <message>``), moved to ``mcp.log.1`` past 5 MB.
The SDK's own warnings and tracebacks go to the same file instead of stderr, so a
failing server is said once, by the plugin, in one line."""

from __future__ import annotations

import json
import logging
import logging.handlers
from datetime import UTC, datetime
from pathlib import Path

MAX_LOG_BYTES = 5 * 1024 * 1024
_handlers: dict[str, logging.Handler] = {}


def _handler(path: Path) -> logging.Handler:
    key = str(path)
    if key not in _handlers:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_LOG_BYTES, backupCount=1,
                                                       encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(message)s"))
        _handlers[key] = handler
    return _handlers[key]


class ServerLog:
    """Appends to ``<agent dir>/mcp.log``; a write that fails is dropped (the log must
    never break a tool)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.logger = logging.getLogger(f"pi.mcp.log.{path}")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)
        try:
            handler = _handler(path)
        except OSError:
            return
        if handler not in self.logger.handlers:
            self.logger.addHandler(handler)
        sdk = logging.getLogger("mcp")  # the SDK's records: to the file, not to stderr
        sdk.propagate = False
        if handler not in sdk.handlers:
            sdk.addHandler(_SdkRecords(handler))

    def write(self, server: str, params: dict) -> None:
        level = params.get("level") if isinstance(params.get("level"), str) else "info"
        logger = f" {params['logger']}:" if isinstance(params.get("logger"), str) and params["logger"] else ""
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        text = text.replace("\r\n", "\n").replace("\n", "\n    ")
        self.logger.info("%s [%s] %s%s %s", _now(), server, level, logger, text)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _SdkRecords(logging.Handler):
    """The SDK's records, written in the log's format under ``[sdk]``."""

    def __init__(self, target: logging.Handler) -> None:
        super().__init__(logging.WARNING)
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        line = f"{_now()} [sdk] {record.levelname.lower()} {record.name}: {text}".replace("\n", "\n    ")
        self.target.emit(logging.makeLogRecord({"msg": line, "levelno": record.levelno}))
