"""``pi batch`` (its click command is imported only when it runs): the batch runner (:mod:`pi_plugins.batch.runner`) on the command line, with a
progress bar on stderr when it is a terminal and, with ``--mode json``, one event line per
task start and end on stdout."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import TextIO

import click

from pi_plugins.batch.runner import BatchError, read_results, read_tasks, run_batch


class ProgressBar:
    """One redrawn line: a bar, done/total, failures, rate (only on a terminal)."""

    def __init__(self, total: int, already: int, stream: TextIO, width: int = 30):
        self.total, self.done, self.failed = total, already, 0
        self.running = 0
        self.stream, self.width = stream, width
        self.started = time.monotonic()
        self._ran = 0

    def event(self, event: dict) -> None:
        if event["type"] == "task_start":
            self.running += 1
        else:
            self.running -= 1
            self.done += 1
            self._ran += 1
            self.failed += bool(event.get("error"))
        self.draw()

    def draw(self) -> None:
        filled = int(self.width * self.done / self.total) if self.total else self.width
        elapsed = time.monotonic() - self.started
        rate = f"  {self._ran / elapsed:.1f}/s" if elapsed > 0 and self._ran else ""
        failed = f"  {self.failed} failed" if self.failed else ""
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total}"
                          f"  {self.running} running{failed}{rate}\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


async def run_batch_command(tasks_file: str, out: str, *, concurrency: int, mode: str,
                            model: str | None, executor: str, ray_address: str | None,
                            session_dir: str | None, extensions: list[str],
                            no_extensions: bool, stdout: TextIO | None = None,
                            stderr: TextIO | None = None, budget: dict | None = None,
                            max_total_cost: str | None = None, approve: bool | None = None) -> int:
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        tasks = read_tasks(tasks_file)
    except BatchError as exc:
        stderr.write(f"error: {exc}\n")
        return 2
    if model:
        for task in tasks:
            task.model = task.model or model
    already = len({t.id for t in tasks} & {i for i, r in read_results(out).items() if not r.get("error")})
    bar = ProgressBar(len(tasks), already, stderr) if stderr.isatty() else None
    if bar is not None:
        bar.draw()

    def on_event(event: dict) -> None:
        if mode == "json":
            stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
            stdout.flush()
        if bar is not None:
            bar.event(event)

    try:
        await run_batch(tasks, out=out, concurrency=concurrency, executor=executor,
                        ray_address=ray_address, sessions_dir=session_dir,
                        discover=not no_extensions, extension_paths=extensions, on_event=on_event,
                        budget=budget, max_total_cost=max_total_cost, approve=approve)
    except (BatchError, ImportError) as exc:
        if bar is not None:
            bar.close()
        stderr.write(f"error: {exc}\n")
        return 2
    if bar is not None:
        bar.close()
    results = read_results(out)
    failed = [t.id for t in tasks if t.id not in results or results[t.id].get("error")]
    stopped = [i for i in failed if results.get(i, {}).get("stop_reason") == "budget"]
    if stopped and len(stopped) == len(failed):  # as pi -p: exit status 3
        stderr.write(f"budget reached: {len(stopped)} of {len(tasks)} tasks not finished (see {out}; "
                     "run again with a higher limit to do them)\n")
        return 3
    if failed:
        shown = ", ".join(failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
        stderr.write(f"{len(failed)} of {len(tasks)} tasks failed: {shown} (see {out})\n")
        return 1
    return 0


@click.command("batch")
@click.argument("tasks_file", metavar="TASKS.jsonl", type=click.Path(dir_okay=False))
@click.option("--out", required=True, metavar="RESULTS.jsonl", type=click.Path(dir_okay=False),
              help="Results file: one line per task as it ends; ids finished there are skipped.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
              help="Tasks running at once (in this process, or in total on Ray).")
@click.option("--mode", type=click.Choice(["text", "json"]), default="text",
              help="json: one event line per task start and end on stdout.")
@click.option("--model", help="Model for tasks that name none (provider/id).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: one event loop here; ray: Ray workers (pip install 'pi-harness[ray]').")
@click.option("--ray-address", metavar="ADDR", help="Ray cluster to join (default: start Ray here).")
@click.option("--session-dir", help="Folder for the tasks' session files.")
@click.option("--max-cost", metavar="USD", help="Each task stops before a request once it has spent this much.")
@click.option("--max-tokens", metavar="N", help="Each task stops once it has used N input plus output tokens.")
@click.option("--max-turns", metavar="N", help="Each task stops once it has made N model requests.")
@click.option("--max-total-cost", metavar="USD",
              help="The whole batch's limit: once reached no task starts, running ones stop; the rest are marked budget.")
@click.option("-e", "--extension", "extensions", multiple=True, help="Load a plugin file or package directory (repeatable).")
@click.option("-ne", "--no-extensions", is_flag=True, help="Skip plugin discovery (explicit -e still loads).")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or ignore) the task folders' .pi resources and extensions for this batch.")
def batch_command(tasks_file, out, concurrency, mode, model, executor, ray_address, session_dir,
                  max_cost, max_tokens, max_turns, max_total_cost, extensions, no_extensions, approve) -> None:
    """Run a batch of agents: one per line of TASKS.jsonl, {"id", "prompt", "cwd"?,
    "model"?, "tools"?, "system_prompt"?}. Each result line is {"id", "session", "text",
    "stop_reason", "usage", "host", "error"?}. Exits 0 when every task succeeded, 3 when
    the rest were stopped by a budget, else 1."""
    try:
        sys.exit(asyncio.run(run_batch_command(
            tasks_file, out, concurrency=concurrency, mode=mode, model=model, executor=executor,
            ray_address=ray_address, session_dir=session_dir, extensions=list(extensions),
            no_extensions=no_extensions, max_total_cost=max_total_cost, approve=approve,
            budget={"cost": max_cost, "tokens": max_tokens, "turns": max_turns})))
    except KeyboardInterrupt:  # the running agents were aborted; finished results are kept
        click.echo(f"\ninterrupted: the results of finished tasks are in {out}; "
                   "run again to do the rest", err=True)
        sys.exit(130)
