"""The editor: !cmd and !!cmd, completion of commands and files, the prompt history."""

import json

from support.llm_server import Reply


def test_bang_runs_a_shell_command_whose_output_joins_the_context(pi_screen, server):
    server.push(Reply(text="It printed the marker."))
    term = pi_screen()
    term.submit("!echo shell-$((6 * 7))")
    screen = term.wait_for("shell-42\n")
    assert "$ echo shell-$((6 * 7))" in screen
    term.submit("!!echo secret-$((2 + 2))")
    screen = term.wait_for("secret-4\n")
    assert "(not sent to the model)" in screen
    term.submit("What did it print?")
    term.wait_for("It printed the marker.")
    sent = json.dumps(server.requests[0].body["messages"])
    assert "shell-42" in sent and "secret-4" not in sent
    kinds = [e["message"]["role"] for e in term.entries() if e["type"] == "message"]
    assert kinds[:2] == ["bashExecution", "bashExecution"]


def test_slash_and_at_complete_and_up_recalls_earlier_prompts(pi_screen, server):
    server.push(Reply(text="Noted."))
    term = pi_screen(files={"src/parser_module.py": "x = 1\n", "src/other.py": ""})
    term.type("/tr")
    menu = term.wait_for("Move to any point of the session tree")
    assert "/tree" in menu
    term.press("C-c")
    term.wait_drawn(lambda s: "/tree" not in s)
    term.type("look at @parsmod")
    term.wait_for("src/parser_module.py")
    term.press("Tab")
    term.wait_drawn(lambda s: term.editor(s) == "look at @src/parser_module.py")
    term.press("Enter")  # takes the completion
    term.press("Enter")  # sends
    term.wait_for("Noted.")
    assert "look at @src/parser_module.py" in json.dumps(server.requests[0].body["messages"])
    term.press("Up")
    term.wait_drawn(lambda s: term.editor(s) == "look at @src/parser_module.py")
