"""Batches of agents: many independent prompts, each its own agent and session, run a
bounded number at a time in one event loop (or on Ray, :mod:`pi_plugins.batch.ray`).

    results = await run_batch(tasks, out="results.jsonl", concurrency=8)

A task is ``{"id", "prompt", "cwd"?, "model"? ("provider/id"), "tools"?, "system_prompt"?}``;
a result ``{"id", "session", "text", "stop_reason", "usage", "host", "error"?}``, appended
to ``out`` as each task ends (one complete line, flushed). A task that fails (a model's
HTTP error, an unknown model or tool, a bug) records its ``error`` and the others go on.
Run again with the same ``out`` and the ids already there without an ``error`` are
skipped; failed ones run again (their new line follows the old: the last line of an id
is its result).

Budgets (:mod:`pi_plugins.budget`): ``budget`` holds per-task limits (``{"cost",
"tokens", "turns"}``, over each task's settings ``budget``), ``max_total_cost`` the batch's:
the cost of the results already in ``out`` plus what the running tasks have spent so far.
Once it is reached no task starts and the running ones end before their next request;
every task not finished gets ``"stop_reason": "budget"`` and ``"error": "budget reached"``,
so a rerun with a higher limit takes them up.

Plugins, settings and the model registry are loaded once per process and shared by every
agent; the agents share the providers' pooled HTTP client of the event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from attrs import define, field

#: Default number of agents running at once (``pi batch --concurrency``).
DEFAULT_CONCURRENCY = 8
_TASK_KEYS = {"id", "prompt", "cwd", "model", "tools", "system_prompt"}


class BatchError(ValueError):
    """A tasks file or task that cannot be run as given; the message says where and why."""


@define
class BatchTask:
    id: str
    prompt: str
    cwd: str | None = None
    model: str | None = None
    tools: list[str] | None = None
    system_prompt: str | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "task") -> BatchTask:
        if not isinstance(data, dict):
            raise BatchError(f"{where}: a task is a JSON object, not {type(data).__name__}")
        unknown = sorted(set(data) - _TASK_KEYS)
        if unknown:
            raise BatchError(f"{where}: unknown key(s) {', '.join(unknown)} "
                             f"(a task has {', '.join(sorted(_TASK_KEYS))})")
        for key in ("id", "prompt"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise BatchError(f"{where}: {key!r} must be a non-empty string")
        for key in ("cwd", "model", "system_prompt"):
            if data.get(key) is not None and not isinstance(data[key], str):
                raise BatchError(f"{where}: {key!r} must be a string")
        tools = data.get("tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
            raise BatchError(f"{where}: 'tools' must be a list of tool names")
        fields: dict[str, Any] = {k: data.get(k) for k in _TASK_KEYS}
        return cls(**fields)

    def to_json(self) -> dict:
        return {k: v for k, v in (("id", self.id), ("prompt", self.prompt), ("cwd", self.cwd),
                                  ("model", self.model), ("tools", self.tools),
                                  ("system_prompt", self.system_prompt)) if v is not None}


def as_tasks(tasks: Iterable[Any]) -> list[BatchTask]:
    """Tasks from objects or dicts; raises :class:`BatchError` for a bad one or a repeated id."""
    found, seen = [], set()
    for n, task in enumerate(tasks, 1):
        task = task if isinstance(task, BatchTask) else BatchTask.from_json(task, f"task {n}")
        if task.id in seen:
            raise BatchError(f"task {n}: the id {task.id!r} is used twice")
        seen.add(task.id)
        found.append(task)
    return found


def read_tasks(path: str | os.PathLike) -> list[BatchTask]:
    """The tasks of a JSONL file (blank lines skipped); every line is checked before any
    task runs, so a typo on line 900 does not cost 899 runs."""
    tasks = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BatchError(f"{path}: {exc.strerror or exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise BatchError(f"{path}:{n}: not JSON ({exc})") from None
        tasks.append(BatchTask.from_json(data, f"{path}:{n}"))
    return as_tasks(tasks)


def _result_lines(path: str | os.PathLike):
    """Every complete JSON object in the results file ``path``, in order; a torn last
    line (or any line that is not one) is skipped; no file: none."""
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                yield data


def read_results(path: str | os.PathLike) -> dict[str, dict]:
    """The results already in ``path``, by id (the last line of an id wins)."""
    return {data["id"]: data for data in _result_lines(path) if isinstance(data.get("id"), str)}


def finished_ids(path: str | os.PathLike) -> set[str]:
    """Ids whose result in ``path`` has no ``error``: what a rerun skips."""
    return {i for i, r in read_results(path).items() if not r.get("error")}


class ResultsFile:
    """Appends one result per line, each written whole and flushed as its task ends."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if self.path.exists() and self.path.stat().st_size:
            with open(self.path, "rb") as existing:
                existing.seek(-1, os.SEEK_END)
                torn = existing.read(1) != b"\n"
        self._file = open(self.path, "a", encoding="utf-8")
        if torn:  # a line cut short by a crash stays; the next one starts on its own line
            self._file.write("\n")

    def write(self, result: dict) -> None:
        self._file.write(json.dumps(result, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


# ---------------------------------------------------------------- budgets

BUDGET_ERROR = "budget reached"


class BatchBudget:
    """The per-task limits and the batch's ``max_total_cost``, against the cost of what
    the batch has finished (``spent_before``: results already in the results file) and
    what its running tasks have spent so far."""

    def __init__(self, limits: dict | None = None, max_total_cost: Any = None, spent_before: float = 0.0):
        from pi_plugins.budget.limits import Budget, BudgetError, parse_limit

        self.limits = {k: v for k, v in (limits or {}).items() if v is not None}
        try:
            Budget.from_settings(None, self.limits)  # a bad limit is said before any task runs
            total = parse_limit(max_total_cost, "--max-total-cost", False)
        except BudgetError as exc:
            raise BatchError(str(exc)) from None
        self.total = Budget(max_cost=total) if total is not None else None
        self.finished = spent_before
        self.running: set = set()

    def spent(self):
        from pi_plugins import budget as budgets
        from pi_plugins.budget.limits import Spent

        return Spent(cost=self.finished + sum(budgets.spent(h.ctx).cost for h in self.running))

    def reached(self) -> bool:
        return self.total is not None and self.total.exceeded(self.spent()) is not None

    def for_task(self, settings):
        """A task's budget: its limits, with the batch's total as its parent."""
        from pi_plugins.budget.limits import Budget, BudgetError

        try:
            budget = Budget.from_settings(settings, self.limits)
        except BudgetError as exc:
            raise BatchError(str(exc)) from None
        if self.total is not None:
            budget.parent, budget.parent_spent = self.total, self.spent
        return budget


def budget_result(task: BatchTask, host: str | None) -> dict:
    """The result of a task the batch's budget kept from starting."""
    from pi_core.protocol.codec import to_json
    from pi_core.protocol.usage import total_usage

    return {"id": task.id, "session": None, "text": "", "stop_reason": "budget",
            "usage": to_json(total_usage([])), "host": host, "error": BUDGET_ERROR}


def results_cost(path: str | os.PathLike) -> float:
    """What the results in ``path`` cost, every line (a rerun's spend adds to the first's)."""
    cost = 0.0
    for data in _result_lines(path):
        try:
            cost += float(data["usage"]["cost"]["total"])
        except (ValueError, KeyError, TypeError):
            continue
    return cost


# ---------------------------------------------------------------- running tasks


_said_untrusted: set = set()


def _say_untrusted(cwd: str, agent_dir: Path, approve: bool | None) -> None:
    """The one line for a task folder whose protected resources a batch skips for want
    of a decision (once per folder and process)."""
    from pi_core.app.settings import quiet_trust

    if approve is not None or cwd in _said_untrusted:
        return
    _said_untrusted.add(cwd)
    said = quiet_trust(cwd, agent_dir).notice
    if said:
        print(f"{cwd}: {said}", file=sys.stderr)


@define
class BatchEnvironment:
    """What every agent of one process shares: plugins, model registry, settings by cwd."""

    plugins: Any
    registry: Any
    agent_dir: Path
    sessions_dir: Path | None = None
    host: str = field(factory=socket.gethostname)
    #: ``pi batch -a`` (True) / ``-na`` (False): project trust for every task's folder;
    #: ``None``: each folder's saved decision or ``defaultProjectTrust`` (a batch cannot ask).
    approve: bool | None = None
    _settings: dict = field(factory=dict)
    _models: dict = field(factory=dict)
    #: One probe for local servers at a time: concurrent tasks wait for its models.
    _probe: Any = field(factory=asyncio.Lock)
    _probed: set = field(factory=set)

    @classmethod
    async def load(cls, *, cwd: str | None = None, agent_dir: str | os.PathLike | None = None,
                   sessions_dir: str | os.PathLike | None = None, discover: bool = True,
                   extension_paths: Iterable[str] = (), plugins: Any = None,
                   approve: bool | None = None) -> BatchEnvironment:
        from pi_core.app.discovery import load_plugins
        from pi_core.app.settings import Settings
        from pi_core.paths import agent_dir as default_agent_dir
        from pi_plugins.models.registry import ModelRegistry

        cwd = cwd or os.getcwd()
        home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        if plugins is None:
            settings = Settings.load(cwd, home, project_trusted=approve)
            _say_untrusted(cwd, home, approve)
            plugins = load_plugins(cwd=cwd, agent_dir=home, extension_paths=list(extension_paths),
                                   discover=discover, settings=settings)
        registry = await ModelRegistry.from_plugins(plugins, agent_dir=home)
        return cls(plugins=plugins, registry=registry, agent_dir=home, approve=approve,
                   sessions_dir=Path(sessions_dir) if sessions_dir is not None else None)

    def settings_for(self, cwd: str):
        from pi_core.app.settings import Settings

        found = self._settings.get(cwd)
        if found is None:
            found = self._settings[cwd] = Settings.load(cwd, self.agent_dir, project_trusted=self.approve)
            _say_untrusted(cwd, self.agent_dir, self.approve)
        return found

    def reload_settings(self) -> None:
        """Read every folder's settings again when next asked (``pi serve``'s settings view
        changed the defaults), and choose the default model again with them."""
        self._settings.clear()
        self._models.clear()
        self._probed.clear()

    async def model_for(self, pattern: str | None, settings) -> tuple[Any, str | None]:
        """(model, thinking level) of a task's ``model``, else the settings' default or
        the first available model; chosen once per pattern and settings (choosing the
        default scans the whole catalogue). Local servers are looked for as ``pi`` does
        (:func:`pi_plugins.models.start_model.find_local_models`): when nothing is configured, or the
        task names a model not known yet."""
        from pi_plugins.models.registry import ModelNotFoundError
        from pi_plugins.models.start_model import choose_model, find_local_models

        key = (pattern, id(settings))
        found = self._models.get(key)
        if found is None:
            async with self._probe:
                if key not in self._probed:  # a failed look is not repeated for every task
                    self._probed.add(key)
                    await find_local_models(self.registry, self.plugins, settings, pattern=pattern)
            found = self._models.get(key)
        if found is None:
            try:
                model, level, _, _ = choose_model(self.registry, settings, pattern=pattern)
            except ModelNotFoundError as exc:
                raise BatchError(str(exc)) from None
            found = self._models[key] = (model, level)
        return found

    def session_folder(self, cwd: str, settings) -> Path:
        """``sessions_dir`` when given, else ``PI_CODING_AGENT_SESSION_DIR`` or the
        ``sessionDir`` setting, else the project's folder under the agent dir."""
        from pi_core.session.locations import session_dir_for
        from pi_plugins.cli.run_args import RunArgs
        from pi_plugins.cli.sessions import sessions_dir

        chosen = self.sessions_dir or sessions_dir(RunArgs(), settings)
        return Path(chosen) if chosen is not None else session_dir_for(cwd, self.agent_dir / "sessions")


async def run_task(env: BatchEnvironment, task: BatchTask, *, cwd: str | None = None,
                   budget: BatchBudget | None = None) -> dict:
    """Run one task to its end in its own harness and session; never raises for the
    task's own failure (it is the result's ``error``). With ``budget``, the task stops at
    its limits or the batch's (stop reason ``budget``)."""
    from pi_core.app.assembly import assemble
    from pi_core.protocol.codec import to_json
    from pi_core.protocol.options import ResourceOptions
    from pi_core.protocol.usage import final_assistant, total_usage
    from pi_core.session import Session
    from pi_plugins.budget import attach, stop_of

    result: dict[str, Any] = {"id": task.id, "session": None, "text": "", "stop_reason": None,
                              "usage": None, "host": env.host}
    harness = None
    produced: list = []
    try:
        where = os.path.abspath(os.path.join(cwd or os.getcwd(), task.cwd or "."))
        if not os.path.isdir(where):
            raise BatchError(f"cwd {where} is not a folder")
        settings = env.settings_for(where)
        model, level = await env.model_for(task.model, settings)
        session = Session.create(where, env.session_folder(where, settings))
        task_budget = budget.for_task(settings) if budget is not None else None

        def before_start(started) -> None:
            nonlocal harness
            harness = started
            if task_budget is not None:
                assert budget is not None  # the task's budget is the batch's share
                attach(started.ctx, task_budget)
                budget.running.add(started)

        await assemble(
            plugins=env.plugins, session=session, model=model, registry=env.registry,
            thinking_level=level, model_is_explicit=True, cwd=where, settings=settings,
            agent_dir=env.agent_dir, options=ResourceOptions(system_prompt=task.system_prompt),
            system_prompt=task.system_prompt or "", before_start=before_start)
        assert harness is not None  # before_start was given it
        if task.tools is not None:
            unknown = sorted(set(task.tools) - {t.name for t in harness.agent.tools or []})
            if unknown:
                raise BatchError(f"unknown tool(s): {', '.join(unknown)}")
            harness.agent.set_active_tools(task.tools)
        produced = await harness.prompt(task.prompt, source="rpc")
        final = final_assistant(produced)
        if stop_of(harness.ctx) is not None:  # its own limit or the batch's, maybe before any answer
            result["text"] = final.text if final is not None else ""
            result["stop_reason"], result["error"] = "budget", BUDGET_ERROR
        elif final is None:
            raise BatchError("the run produced no answer")
        else:
            result["text"] = final.text
            result["stop_reason"] = final.stop_reason
            if final.stop_reason in ("error", "aborted"):
                result["error"] = final.error_message or f"the run ended with stop reason {final.stop_reason}"
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # BatchError, or a bug below: recorded, the others go on
        result["error"] = str(exc) if isinstance(exc, BatchError) else f"{type(exc).__name__}: {exc}"
    finally:
        if harness is not None:
            produced = produced or harness.messages
            result["usage"] = to_json(total_usage(produced))
            file = harness.session.file
            result["session"] = str(file) if file is not None and file.exists() else None
            if budget is not None and harness in budget.running:
                budget.running.discard(harness)
                budget.finished += result["usage"]["cost"]["total"]
            try:
                await harness.close()
            except Exception:  # the session's lock, a plugin's shutdown hook
                pass
    if result["usage"] is None:
        result["usage"] = to_json(total_usage([]))
    if "error" in result:  # keep the documented key order: error last
        result["error"] = result.pop("error")
    return result


Listener = Callable[[dict], Any]


async def run_local(tasks: list[BatchTask], env: BatchEnvironment, *, concurrency: int,
                    on_result: Listener, on_event: Listener | None = None,
                    cwd: str | None = None, budget: BatchBudget | None = None) -> None:
    """``concurrency`` workers take the tasks in order, one agent each at a time; once
    the batch's budget is reached, the rest are budget results without a start. With
    telemetry on, the batch is one trace: a ``pi batch`` span, a ``batch_task`` span per
    task, each task's run under its span (the workers inherit the batch's context)."""
    from pi_plugins.telemetry import work_span

    pending = iter(tasks)

    async def worker() -> None:
        for task in pending:  # a shared iterator: each task is taken once
            if budget is not None and budget.reached():
                on_result(budget_result(task, env.host))
                continue
            if on_event is not None:
                on_event({"type": "task_start", "id": task.id})
            with work_span("batch_task", {"pi.batch.task.id": task.id}):
                result = await run_task(env, task, cwd=cwd, budget=budget)
            on_result(result)

    with work_span("pi batch", {"pi.batch.tasks": len(tasks), "pi.batch.concurrency": concurrency}):
        workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(tasks))))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise


async def run_batch(
    tasks: Iterable[Any],
    *,
    out: str | os.PathLike | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    executor: str = "local",
    ray_address: str | None = None,
    cwd: str | None = None,
    agent_dir: str | os.PathLike | None = None,
    sessions_dir: str | os.PathLike | None = None,
    discover: bool = True,
    extension_paths: Iterable[str] = (),
    plugins: Any = None,
    on_event: Listener | None = None,
    budget: dict | None = None,
    max_total_cost: Any = None,
    approve: bool | None = None,
) -> list[dict]:
    """Run ``tasks`` (dicts or :class:`BatchTask`), ``concurrency`` at a time, and return
    the results of those that ran, in the order they ended. With ``out``, each result is
    appended there as it ends and ids already finished there are skipped. ``on_event``
    receives ``{"type": "task_start", "id"}`` and ``{"type": "task_end", **result}``.
    ``executor="ray"`` runs them on Ray (``ray_address``, or a local Ray), where each
    worker uses its own machine's agent dir (``agent_dir`` and ``plugins`` are ignored).
    ``budget`` (per-task limits ``{"cost", "tokens", "turns"}``) and ``max_total_cost``:
    see the module's docstring."""
    if concurrency < 1:
        raise BatchError("concurrency must be at least 1")
    if executor not in ("local", "ray"):
        raise BatchError(f"unknown executor {executor!r} (local or ray)")
    todo = as_tasks(tasks)
    spend = None
    if budget or max_total_cost is not None:
        spend = BatchBudget(budget, max_total_cost, results_cost(out) if out is not None else 0.0)
    if out is not None:
        done = finished_ids(out)
        todo = [t for t in todo if t.id not in done]
    results: list[dict] = []
    writer = ResultsFile(out) if out is not None else None

    def on_result(result: dict) -> None:
        results.append(result)
        if writer is not None:
            writer.write(result)
        if on_event is not None:
            on_event({"type": "task_end", **result})

    try:
        if not todo:
            return results
        if executor == "ray":
            from pi_plugins.batch.ray import run_on_ray

            await run_on_ray(todo, concurrency=concurrency, address=ray_address, on_result=on_result,
                             on_event=on_event, cwd=cwd or os.getcwd(), discover=discover,
                             extension_paths=list(extension_paths),
                             sessions_dir=str(sessions_dir) if sessions_dir is not None else None,
                             budget=spend, approve=approve)
        else:
            env = await BatchEnvironment.load(cwd=cwd, agent_dir=agent_dir, sessions_dir=sessions_dir,
                                              discover=discover, extension_paths=extension_paths,
                                              plugins=plugins, approve=approve)
            await run_local(todo, env, concurrency=concurrency, on_result=on_result,
                            on_event=on_event, cwd=cwd, budget=spend)
    finally:
        if writer is not None:
            writer.close()
    return results
