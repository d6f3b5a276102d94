"""What the command line (or a program composing an agent) chose for one run, beyond
settings.json: the choices the resource plugins honour."""

from __future__ import annotations

from pathlib import Path

from pi_core.protocol.records import field, record


@record
class ResourceOptions:
    system_prompt: str | None = None  # replaces the built-in base prompt
    append_system_prompt: list[str] = field(factory=list)
    context_files: bool = True  # --no-context-files turns AGENTS.md / CLAUDE.md off
    skills: bool = True  # --no-skills
    skill_paths: list[Path] = field(factory=list)  # --skill (loaded even with --no-skills)
    prompt_templates: bool = True  # --no-prompt-templates
    prompt_template_paths: list[Path] = field(factory=list)  # --prompt-template
