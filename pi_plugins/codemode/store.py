"""``store()`` / ``load()`` across codemode calls: the values live in the session as
``codemode-store`` custom entries (pi 1.6's ``{"set": {...}, "delete": [...]}``), one
per successful script that wrote, so each branch sees the values written on its path
and a resumed session keeps them."""

from __future__ import annotations

import json
from typing import Any

from pi_core import CustomEntry

CUSTOM_TYPE = "codemode-store"


class ScriptStore:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    @classmethod
    def of(cls, ctx: Any) -> ScriptStore:
        return cls(ctx)

    def _session(self) -> Any:
        try:
            return self.ctx.session
        except (AttributeError, RuntimeError):
            return None

    def values(self) -> dict[str, str]:
        """Key → JSON text, as the entries on the current branch leave them."""
        session = self._session()
        out: dict[str, str] = {}
        if session is None:
            return out
        for entry in session.path():
            if isinstance(entry, CustomEntry) and entry.custom_type == CUSTOM_TYPE and isinstance(entry.data, dict):
                for key in entry.data.get("delete") or []:
                    out.pop(key, None)
                for key, value in (entry.data.get("set") or {}).items():
                    out[key] = json.dumps(value, ensure_ascii=False)
        return out

    def keep(self, writes: dict[str, str | None]) -> None:
        """Append the writes of a script that succeeded (nothing when it wrote nothing)."""
        if not writes or self._session() is None:
            return
        data = {"set": {k: json.loads(v) for k, v in writes.items() if v is not None},
                "delete": [k for k, v in writes.items() if v is None]}
        self.ctx.append_entry(CUSTOM_TYPE, data)
