"""Resource plugins: what discovery costs once per run and what each prompt costs after.

Builds, in a temp dir, an agent dir with 200 skills and 100 prompt templates and a
project 12 directories deep with a context file at every level, then measures through
the real hook chains (as the harness calls them):

- cold: the first prompt of a run (every folder scanned, every frontmatter parsed);
- warm: each later prompt (``input`` with a template to expand, ``before_agent_start``);
- import: importing the four plugin modules (they load on every ``pi`` start), with
  bytecode caches as an installed package has them (kept in a temp dir here).

Prints the figures; exits 1 when over budget.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_COLD_MS = 150.0
BUDGET_WARM_MS = 2.0
BUDGET_IMPORT_MS = 25.0
SKILLS, TEMPLATES, DEPTH, WARM_ROUNDS = 200, 100, 12, 300


def build_tree(root: Path) -> tuple[Path, Path]:
    agent_dir = root / "agent"
    for i in range(SKILLS):
        folder = agent_dir / "skills" / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:03d}\ndescription: Does task number {i} well.\n---\n\n# Steps\n\n"
            + "Step.\n" * 40
        )
    prompts = agent_dir / "prompts"
    prompts.mkdir(parents=True)
    for i in range(TEMPLATES):
        (prompts / f"t{i:03d}.md").write_text(f"---\ndescription: Template {i}\n---\nDo $1 with ${{@:2}}.\n")
    cwd = root
    for level in range(DEPTH):
        cwd = cwd / f"level{level}"
        cwd.mkdir()
        (cwd / "AGENTS.md").write_text(f"Rules of level {level}.\n" * 20)
    return agent_dir, cwd


def make_ctx(agent_dir: Path, cwd: Path):
    from pi_core import Agent, Plugins
    from pi_core.context import Context
    from pi_core.protocol.tools import Tool
    from pi_plugins import context_files, prompt_templates, skills, system_prompt
    from pi_core.testing import scripted_model

    plugins = Plugins()
    for module in (system_prompt, context_files, skills, prompt_templates):
        plugins.register(module)
    ctx = Context(cwd=str(cwd), plugins=plugins, agent_dir=agent_dir)
    tools = [Tool(name=n, description=f"The {n} tool.") for n in ("read", "bash", "edit", "write")]
    Agent(model=scripted_model(), plugins=plugins, tools=tools, ctx=ctx)
    return ctx


async def one_prompt(ctx, text: str) -> str:
    from pi_core.protocol.events import BeforeAgentStartEvent, InputEvent

    event = await ctx.plugins.call("input", event=InputEvent(text=text), ctx=ctx)
    start = BeforeAgentStartEvent(prompt=event.text, system_prompt="")
    start = await ctx.plugins.call("before_agent_start", event=start, ctx=ctx)
    return start.system_prompt


def import_ms(pycache: str) -> float:
    code = (
        "import time, pi_core, attrs, pathlib, re\n"
        "start = time.perf_counter()\n"
        "import pi_plugins.system_prompt, pi_plugins.context_files, pi_plugins.skills, pi_plugins.prompt_templates\n"
        "print((time.perf_counter() - start) * 1000)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    times = []
    for _ in range(8):  # the first run writes the caches
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
        times.append(float(out.stdout))
    return min(times[1:])


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        agent_dir, cwd = build_tree(Path(tmp))
        os.environ["PI_CODING_AGENT_DIR"] = str(agent_dir)
        os.environ["HOME"] = tmp
        ctx = make_ctx(agent_dir, cwd)
        start = time.perf_counter()
        prompt = await one_prompt(ctx, "/t042 parse a b c")
        cold = (time.perf_counter() - start) * 1000
        assert prompt.count("<skill>") == SKILLS and prompt.count("Rules of level 0.") == 20, "tree not found"
        start = time.perf_counter()
        for _ in range(WARM_ROUNDS):
            await one_prompt(ctx, "/t042 parse a b c")
        warm = (time.perf_counter() - start) * 1000 / WARM_ROUNDS
        system_chars = len(prompt)
        imported = import_ms(str(Path(tmp) / "pycache"))
    print(f"resources: cold first prompt ({SKILLS} skills, {TEMPLATES} templates, {DEPTH} context files): {cold:.1f} ms (budget {BUDGET_COLD_MS:.0f})")
    print(f"resources: warm prompt (input + before_agent_start, {system_chars} chars): {warm:.3f} ms (budget {BUDGET_WARM_MS})")
    print(f"resources: import of the four plugin modules over pi_core: {imported:.1f} ms (budget {BUDGET_IMPORT_MS:.0f})")
    over = cold > BUDGET_COLD_MS or warm > BUDGET_WARM_MS or imported > BUDGET_IMPORT_MS
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
