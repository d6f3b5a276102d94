"""What a plain ``pi -p`` does not load: the work it skips is what keeps it fast (issue 35's
floor), and a module imported at the top of a file can quietly bring it all back."""

import subprocess
import sys

import pytest
from support.llm_server import Reply

PROBE = ("import sys; sys.argv = ['pi'] + sys.argv[1:]; from pi_plugins.cli.entry import main; "
         "import atexit; atexit.register(lambda: print(sorted(m for m in {} if m in sys.modules), "
         "file=sys.stderr)); sys.exit(main())")

#: Each loaded only where it is used: rarely used events and decisions, the session file's
#: JSON (no file with --no-session), the session events a plain prompt never emits, the
#: chat, the web page, MCP's SDK, the HTTP client's command-line tool; importlib.metadata,
#: when no installed distribution declares a plugin; hashlib (OpenSSL's bindings: a
#: tokenizer's cache key, an Anthropic thread's hash); MCP's configuration, with no
#: mcp.json to read; at the end, what stops commands and catalogue refreshes where none
#: began; the images' fitting, with no image; the settle proposals' types and checks, with no
#: agent_before_settle handler; the trust question's answers, with nothing to ask; the
#: answer journal's writer and reader, with no session file; codemode's script options
#: (and output files), with no script run; the providers of the wire APIs not sent to, and the
#: virtual models' types and router, with no virtual model.
NOT_LOADED = ("pi_core.protocol.rare_events", "cattrs", "prompt_toolkit", "rich", "pi_plugins.serve.app",
              "mcp", "httpx", "pi_plugins.providers.strict_schema", "importlib.metadata", "hashlib",
              "pi_core.app.rare_session_events", "pi_plugins.mcp.config", "pi_plugins.tools.processes",
              "pi_plugins.providers.background_refresh", "pi_plugins.tools.image_fitting",
              "pi_plugins.settle_boundary.proposal", "pi_plugins.trust.asking",
              "pi_plugins.answer_journal.journal", "pi_plugins.codemode.options",
              "pi_plugins.providers.anthropic", "pi_plugins.providers.openai_responses",
              "pi_plugins.providers.google", "pi_plugins.providers.openai_codex", "pi_plugins.providers.bedrock",
              "pi_plugins.providers.mistral", "pi_plugins.providers.pi_messages", "pi_plugins.models.virtual",
              "pi_plugins.virtual_models.provider")


@pytest.mark.process
def test_a_plain_print_run_loads_none_of_the_rarely_used_modules(pi, server):
    server.push(Reply(text="Hello."))
    probe = PROBE.format(repr(NOT_LOADED))
    done = subprocess.run([sys.executable, "-c", probe, *pi.flags("--no-session", "-p", "hi")], cwd=pi.cwd,
                          env=pi.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello."
    assert done.stderr.strip().splitlines()[-1] == "[]"


#: Counts the collections from the command's start until its app is built, and says
#: whether collections are on at the end.
START_PROBE = (
    "import gc, sys; sys.argv = ['pi'] + sys.argv[1:]; from pi_plugins.cli.entry import main; "
    "import pi_plugins.cli.wiring as wiring; seen = []; build = wiring.build_app\n"
    "async def built(*a, **k):\n"
    "    app = await build(*a, **k); seen.append(len(collections)); return app\n"
    "wiring.build_app = built; collections = []\n"
    "gc.callbacks.append(lambda phase, info: collections.append(info) if phase == 'start' else None)\n"
    "import atexit; atexit.register(lambda: print(seen, gc.isenabled(), file=sys.stderr))\n"
    "sys.exit(main())")


@pytest.mark.process
def test_no_collection_runs_while_a_print_run_starts_and_they_resume_once_its_app_is_built(pi, server):
    """What a start imports (click, the commands) and builds (the app) lives as long as the
    process: no collection walks it meanwhile (they found nothing to free); it is frozen,
    and the run's collections resume."""
    server.push(Reply(text="Hello."))
    done = subprocess.run([sys.executable, "-c", START_PROBE, *pi.flags("--no-session", "-p", "hi")],
                          cwd=pi.cwd, env=pi.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello."
    assert done.stderr.strip().splitlines()[-1] == "[0] True"
