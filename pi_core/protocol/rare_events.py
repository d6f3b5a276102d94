"""Events and decisions of what a plain prompt never does (compaction, the tree, forks, model
and thinking changes, retries, the user's shell), built on first use through ``events``."""

from __future__ import annotations

from typing import Any, Literal

from pi_core.protocol.events import CompactionReason, ForkPosition, ModelSource
from pi_core.protocol.records import field, record


@record
class ProviderResponseEvent:
    status: int
    headers: dict[str, str] = field(factory=dict)


@record
class ResourcesDiscoverEvent:
    cwd: str
    reason: Literal["startup", "reload"] = "startup"


@record
class CompactionResult:
    """A summary and where the kept part of the branch starts."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    estimated_tokens_after: int | None = field(default=None, kw_only=True)  # pi 1.6, after
    usage: Any = field(default=None, kw_only=True)  # pi 1.6: what the summary requests spent
    details: Any = None


@record
class CompactionStart:
    type: Literal["compaction_start"] = field(default="compaction_start", init=False)
    reason: CompactionReason = "manual"


@record
class CompactionEnd:
    type: Literal["compaction_end"] = field(default="compaction_end", init=False)
    reason: CompactionReason = "manual"
    result: CompactionResult | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None


@record
class AutoRetryStart:
    type: Literal["auto_retry_start"] = field(default="auto_retry_start", init=False)
    attempt: int = 1
    max_attempts: int = 3
    delay_ms: int = 0
    error_message: str = ""


@record
class AutoRetryEnd:
    type: Literal["auto_retry_end"] = field(default="auto_retry_end", init=False)
    success: bool = False
    attempt: int = 0
    final_error: str | None = None


@record
class ModelSelect:
    type: Literal["model_select"] = field(default="model_select", init=False)
    model: Any = None
    previous_model: Any = None
    source: ModelSource = "set"


@record
class ThinkingLevelChanged:
    """pi's ``thinking_level_changed``: by a set, a cycle, or a model change clamping it."""

    type: Literal["thinking_level_changed"] = field(default="thinking_level_changed", init=False)
    level: str = "off"


@record
class ThinkingLevelSelect:
    type: Literal["thinking_level_select"] = field(default="thinking_level_select", init=False)
    level: str = "off"
    previous_level: str | None = None


@record
class CompactionPreparation:
    """Exactly what the built-in summariser uses, so a plugin's own needs nothing from
    it; ``messages_to_summarize`` includes a split turn's prefix."""

    first_kept_entry_id: str
    tokens_before: int
    messages_to_summarize: list = field(factory=list)
    turn_prefix_messages: list = field(factory=list)
    is_split_turn: bool = False
    previous_summary: str | None = None
    read_files: list[str] = field(factory=list)
    modified_files: list[str] = field(factory=list)


@record
class BeforeCompactEvent:
    """``entries``: the branch (root → leaf) to compact."""

    reason: CompactionReason
    entries: list
    will_retry: bool = False  # pi 1.6: the failed request is sent again after it
    instructions: str | None = None
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    preparation: CompactionPreparation | None = None


@record
class RunDecision:
    """``run_again``: from the context as it now is (a failed answer it ends in left out)."""

    run_again: bool = False


@record
class CompactionDecision:
    """``generate`` (async) runs only if this decision wins, so a plugin later in load
    order replaces the built-in summariser for free."""

    cancel: bool = False
    result: CompactionResult | None = None
    generate: Any = None
    from_hook: bool = True


@record
class BeforeTreeEvent:
    """``entries``: the branch being left, down to the common ancestor."""

    target_id: str | None
    old_leaf_id: str | None
    entries: list
    summarize: bool = False
    instructions: str | None = None


@record
class TreeDecision:
    cancel: bool = False
    summary: str | None = None
    details: Any = None
    generate: Any = None
    from_hook: bool = True


@record
class SessionTreeEvent:
    type: Literal["session_tree"] = field(default="session_tree", init=False)
    old_leaf_id: str | None = None
    new_leaf_id: str | None = None
    summary_entry: Any = None


@record
class SessionCompactEvent:
    type: Literal["session_compact"] = field(default="session_compact", init=False)
    entry: Any = None
    from_hook: bool = False
    reason: CompactionReason = "manual"
    will_retry: bool = False


@record
class SwitchEvent:
    reason: Literal["new", "resume"]
    target: str | None = None


@record
class ForkEvent:
    """``position``: "before" the entry (pi's /fork) or "at" it (a clone)."""

    entry_id: str | None
    position: ForkPosition = "before"


@record
class CancelDecision:
    cancel: bool = False


@record
class UserBashDecision:
    """``result``: the fields (``output``, ``exit_code``, ``cancelled``, ``truncated``,
    ``full_output_path``) the harness makes the message from."""

    cancel: bool = False
    message: Any = None
    result: dict | None = None


@record
class UserBashEvent:
    command: str
    exclude_from_context: bool = False
    cwd: str = "."
