"""Sessions are trees: append entries, branch from an earlier one, fork into a new file,
and see the context the model gets from the leaf.

Run it: python docs/examples/session_tree.py
(It writes its session files into a temporary folder.)
"""

import json
import tempfile

from pi_core import AssistantMessage, Session, TextContent, UserMessage, fork, list_sessions


def user(text):
    return UserMessage(content=[TextContent(text)])


def assistant(text):
    return AssistantMessage(content=[TextContent(text)], api="scripted", provider="scripted",
                            model="scripted-model", stop_reason="stop")


def texts(session):
    return [m.text if m.role == "assistant" else m.content[0].text
            for m in session.build_context().messages]


with tempfile.TemporaryDirectory() as folder:
    session = Session.create("/home/me/app", folder)
    session.append_model_change("scripted", "scripted-model")
    print("file written yet?", session.on_disk)  # not before the first message
    question = session.append_message(user("Name a colour."))
    print("file written yet?", session.on_disk)  # the prompt is never lost
    session.append_message(assistant("Blue."))
    session.append_message(user("Another one?"))
    session.append_message(assistant("Green."))
    print("context:", texts(session))

    # Go back to the first question and answer it differently: a new branch.
    session.branch(question.id)
    session.append_message(assistant("Red."))
    session.append_label(question.id, "colours")
    print("context after branching:", texts(session))

    def show(nodes, depth=0):
        for node in nodes:
            entry = node.entry
            what = entry.type if entry.type != "message" else f"{entry.message.role}"
            label = f"  [{node.label}]" if node.label else ""
            print("  " * depth + what + label)
            show(node.children, depth + 1)

    print("tree:")
    show(session.tree())

    # /fork: a new session file holding the path to an entry, naming its parent.
    forked = fork(session, session.leaf_id)
    print("forked context:", texts(forked))
    print("parent recorded:", forked.header.parent_session == str(session.file))

    lines = session.file.read_text().splitlines()
    print("first line:", sorted(json.loads(lines[0])))
    print("entry types:", [json.loads(line)["type"] for line in lines[1:]])
    print("sessions in the folder:", len(list_sessions(folder)))
    forked.close()
    session.close()
