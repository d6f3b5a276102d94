"""Batches on Ray (``pi batch --executor ray``; ``pip install 'pi-harness[ray]'``).

The batch is spread over Ray actors, one per CPU of the cluster (at most one per task
and per unit of concurrency). Each actor is an async actor: its own event loop running
up to its share of ``concurrency`` agents at once, with the plugins, settings and model
registry of its own machine loaded once (so sessions are written on the worker's machine,
under its agent dir, and each result names its host). The driver hands out the tasks,
keeps ``concurrency`` running in total, and writes each result as it arrives, so the
results file and the resume rule are those of a local run.

Ray is used through its own API: ``ray.init(address=...)`` joins a cluster; without an
address a local Ray is started and shut down afterwards. When the program has already
called ``ray.init`` (a notebook, a test), that Ray is used and left running.

A local Ray started here is this machine's alone: its node address is 127.0.0.1, so its
servers listen on loopback only, and it has no dashboard. On Linux Ray turns a loopback
``_node_ip_address`` into the machine's outward address unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is off (its local-only mode, the default on macOS
and Windows); that variable is read when ``ray`` is imported, so it is set (unless the
user set it) before the import, and checked afterwards with ``ray.util.get_node_ip_address``.

Budgets: with ``max_total_cost`` the driver starts a ledger actor that sums the spend
of every worker (what its finished tasks cost and what its running ones have spent so
far, reported before each of their requests and after each task) on top of the results
file's; the driver starts no task once it is reached, and a running task asks the ledger
before each request, so it stops there too.

Each result's ``host`` names the Ray node it ran on: the hostname and the first eight
characters of the node id (``build-3/3d35fa75``), so two nodes on one machine differ.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import sys
from collections.abc import Callable
from typing import Any

from pi_core.protocol.codec import to_json
from pi_core.protocol.usage import total_usage
from pi_plugins.batch.runner import (
    BatchBudget,
    BatchEnvironment,
    BatchError,
    BatchTask,
    budget_result,
    run_task,
)

#: Ray's switch for its local-only mode (read when ``ray`` is imported).
LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
LOOPBACK = "127.0.0.1"


def _ray(local: bool = False):
    if local and "ray" not in sys.modules:
        os.environ.setdefault(LOCAL_ONLY, "0")  # its workers inherit it
    try:
        import ray
    except ImportError:
        raise BatchError("the ray executor needs Ray: pip install 'pi-harness[ray]'") from None
    return ray


def _start_local(ray) -> None:
    """A Ray of this machine only: node address 127.0.0.1, loopback listeners, no dashboard."""
    if ray.util.get_node_ip_address() != LOOPBACK:
        raise BatchError(
            "a local Ray would listen on this machine's network address: ray was imported "
            f"before pi could set {LOCAL_ONLY}=0; set it before importing ray, start Ray "
            "yourself (ray.init) or give --ray-address")
    ray.init(_node_ip_address=LOOPBACK, include_dashboard=False, log_to_driver=False)


def node_host(ray) -> str:
    """``hostname/node`` for the Ray node this code runs on (the node id's first 8 characters)."""
    return f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:8]}"


class SpendLedger:
    """A Ray actor: the batch's spend, the results file's plus each worker's latest report."""

    def __init__(self, before: float):
        self.before = before
        self.workers: dict[Any, float] = {}

    def update(self, worker: str, cost: float) -> float:
        self.workers[worker] = cost
        return self.total()

    def total(self) -> float:
        return self.before + sum(self.workers.values())


class WorkerBudget(BatchBudget):
    """A worker's share of the batch's budget: its own tasks' spend, which it reports
    to the ledger, and the batch's total, which the ledger answers."""

    def __init__(self, limits: dict, max_total_cost, ledger, key: str):
        super().__init__(limits, max_total_cost)
        self.ledger, self.key = ledger, key

    def local_cost(self) -> float:
        from pi_plugins import budget as budgets

        return self.finished + sum(budgets.spent(h.ctx).cost for h in self.running)

    async def report(self):
        from pi_plugins.budget.limits import Spent

        return Spent(cost=await self.ledger.update.remote(self.key, self.local_cost()))

    def for_task(self, settings):
        budget = super().for_task(settings)
        if budget.parent is not None:
            budget.parent_spent = self.report
        return budget


class BatchWorker:
    """A Ray actor's state: the environment of its machine, loaded on the first task."""

    def __init__(self, options: dict, ledger=None):
        import uuid

        self.options = options
        self.env: BatchEnvironment | None = None
        self._loading: asyncio.Lock | None = None
        budget = options.get("budget")
        self.budget = None if budget is None else WorkerBudget(
            budget["limits"], budget["max_total_cost"], ledger, uuid.uuid4().hex)

    async def run(self, task: dict, trace: dict | None = None) -> dict:
        """Run one task; ``trace`` is the driver's task span (telemetry), its run's parent."""
        from pi_plugins.telemetry import joined

        if self.env is None:
            self._loading = self._loading or asyncio.Lock()
            async with self._loading:
                if self.env is None:
                    self.env = await BatchEnvironment.load(
                        cwd=self.options["cwd"], discover=self.options["discover"],
                        extension_paths=self.options["extension_paths"],
                        sessions_dir=self.options["sessions_dir"], approve=self.options.get("approve"))
                    self.env.host = node_host(_ray())
        with joined(trace):
            result = await run_task(self.env, BatchTask.from_json(task), cwd=self.options["cwd"],
                                    budget=self.budget)
        if self.budget is not None and self.budget.total is not None:
            await self.budget.report()  # the finished task's cost, before the driver looks
        return result


async def run_on_ray(tasks: list[BatchTask], *, concurrency: int, address: str | None,
                     on_result: Callable[[dict], Any], on_event: Callable[[dict], Any] | None,
                     cwd: str, discover: bool = True, extension_paths: list[str] | None = None,
                     sessions_dir: str | None = None, budget: BatchBudget | None = None,
                     approve: bool | None = None) -> None:
    from pi_plugins.telemetry import trace_carrier, work_span

    ray = _ray(local=not address)
    started_here = not ray.is_initialized()
    if started_here:  # workers' output is not forwarded: --mode json owns stdout
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            _start_local(ray)
    workers: list = []
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        count = max(1, min(concurrency, cpus, len(tasks)))
        share = math.ceil(concurrency / count)
        actor = ray.remote(BatchWorker).options(num_cpus=1, max_concurrency=share)
        options = {"cwd": cwd, "discover": discover, "extension_paths": list(extension_paths or []),
                   "sessions_dir": sessions_dir, "approve": approve}
        ledger = None
        if budget is not None:
            total = budget.total.max_cost if budget.total is not None else None
            options["budget"] = {"limits": budget.limits, "max_total_cost": total}
            if total is not None:
                ledger = ray.remote(SpendLedger).options(num_cpus=0).remote(budget.finished)
                workers.append(ledger)  # killed with the workers
        workers += [actor.remote(options, ledger) for _ in range(count)]
        workers_only = workers[1:] if ledger is not None else workers
        pending = iter(tasks)

        limit = budget.total if budget is not None else None  # a ledger is made for it

        async def reached() -> bool:
            return (ledger is not None and limit is not None
                    and await ledger.total.remote() >= limit.max_cost)

        async def dispatch(worker) -> None:
            for task in pending:
                if await reached():  # no task starts past the batch's limit
                    on_result(budget_result(task, None))
                    continue
                if on_event is not None:
                    on_event({"type": "task_start", "id": task.id})
                try:
                    with work_span("batch_task", {"pi.batch.task.id": task.id}):
                        result = await worker.run.remote(task.to_json(), trace_carrier())
                except Exception as exc:  # the worker died, or Ray failed: this task's error
                    result = {"id": task.id, "session": None, "text": "", "stop_reason": None,
                              "usage": to_json(total_usage([])), "host": None,
                              "error": f"ray: {type(exc).__name__}: {exc}"}
                on_result(result)

        with work_span("pi batch", {"pi.batch.tasks": len(tasks), "pi.batch.concurrency": concurrency}):
            runners = [asyncio.ensure_future(dispatch(workers_only[i % count]))  # in the batch's context
                       for i in range(min(concurrency, len(tasks)))]
            try:
                await asyncio.gather(*runners)
            except BaseException:
                for runner in runners:
                    runner.cancel()
                await asyncio.gather(*runners, return_exceptions=True)
                raise
    finally:
        for worker in workers:
            try:
                ray.kill(worker)
            except Exception:
                pass
        if started_here:
            ray.shutdown()
