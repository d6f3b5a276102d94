"""Run a batch of agents from Python: three tasks, two at a time, results in a file.

Run it: python docs/examples/batch.py
(The scripted provider stands in for a real model, so this runs offline; its sessions and
results go to a temporary folder.)
"""

import asyncio
import json
import tempfile
from pathlib import Path

from pi_core import hookimpl, load_plugins, text_of
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins.batch.runner import run_batch


def answer(context):
    """The stand-in model: it repeats the task back in capitals."""
    task = text_of(context.messages[-1].content)
    return Reply(text=task.upper())


class ScriptedModel:
    @hookimpl
    def register_models(self):
        return [scripted_model()]


async def main() -> None:
    plugins = load_plugins(discover=False)  # the built-ins
    plugins.register(ScriptedProvider(router=answer), "scripted")
    plugins.register(ScriptedModel(), "scripted_model")
    tasks = [{"id": f"t{n}", "prompt": f"task number {n}", "model": "scripted/scripted-model"}
             for n in range(3)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.jsonl"
        results = await run_batch(tasks, out=out, concurrency=2, plugins=plugins,
                                  agent_dir=Path(tmp) / "agent")
        for result in sorted(results, key=lambda r: r["id"]):
            print(result["id"], result["stop_reason"], result["text"])
        # run again: every id is finished in the results file, so nothing runs
        again = await run_batch(tasks, out=out, plugins=plugins, agent_dir=Path(tmp) / "agent")
        print("second run:", len(again), "tasks;", len(out.read_text().splitlines()), "result lines")
        print(sorted(json.loads(out.read_text().splitlines()[0])))


if __name__ == "__main__":
    asyncio.run(main())
