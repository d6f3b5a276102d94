"""A first word one slip from a pi subcommand (``pi serv``, ``pi mcpp``, ``pi instal``)
or a flag typed as a word (``pi help``) is refused with a "did you mean" line and never
sent to the model; ordinary one-word prompts (``pi hello``, ``pi lint``) still are.
pi 1.6 sends all of these to the model (run here: ``pi serv``, ``pi help``, ``pi mcpp``
each made a request), so this is a difference on purpose, as the issue asks."""

import subprocess
import sys

import pytest

from pi_plugins.cli.subcommands import near_miss
from support.llm_server import Reply

NAMES = ["install", "remove", "uninstall", "update", "list", "config", "auth", "mcp", "serve", "connect",
         "export", "batch", "plugins"]


@pytest.mark.parametrize("word,meant", [
    ("serv", "pi serve"), ("mcpp", "pi mcp"), ("instal", "pi install"), ("confg", "pi config"),
    ("lsit", "pi list"), ("plugin", "pi plugins"), ("help", "pi --help"), ("version", "pi --version"),
])
def test_a_word_one_slip_from_a_subcommand_is_named(word, meant):
    assert near_miss(word, NAMES) == meant


@pytest.mark.parametrize("word", ["hello", "lint", "remote", "fix", "test", "go", "review", "list", "sessions"])
def test_ordinary_words_and_the_subcommands_themselves_are_no_near_miss(word):
    assert near_miss(word, NAMES) is None


@pytest.mark.process
def test_pi_serv_is_refused_with_the_command_it_was_meant_to_be_and_asks_no_model(pi, server):
    server.push(Reply(text="should not be asked"))
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "serv", "-p"], cwd=pi.cwd, env=pi.env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert 'Error: "serv" is not a pi command. Did you mean "pi serve"?' in done.stderr
    assert server.requests == []


@pytest.mark.process
def test_a_one_word_prompt_still_reaches_the_model(pi, server):
    server.push(Reply(text="hi there"))
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "hello", *pi.flags("-p")], cwd=pi.cwd,
                          env=pi.env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "hi there\n"), done.stderr
    assert len(server.requests) == 1
