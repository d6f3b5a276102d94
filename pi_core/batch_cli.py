"""``pi batch``: the batch runner (:mod:`pi_core.batch`) on the command line, with a
progress bar on stderr when it is a terminal and, with ``--mode json``, one event line per
task start and end on stdout."""

from __future__ import annotations

import json
import sys
import time
from typing import TextIO

from pi_core.batch import BatchError, read_results, read_tasks, run_batch


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
                            stderr: TextIO | None = None) -> int:
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
                        discover=not no_extensions, extension_paths=extensions, on_event=on_event)
    except (BatchError, ImportError) as exc:
        if bar is not None:
            bar.close()
        stderr.write(f"error: {exc}\n")
        return 2
    if bar is not None:
        bar.close()
    results = read_results(out)
    failed = [t.id for t in tasks if t.id not in results or results[t.id].get("error")]
    if failed:
        shown = ", ".join(failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
        stderr.write(f"{len(failed)} of {len(tasks)} tasks failed: {shown} (see {out})\n")
        return 1
    return 0
