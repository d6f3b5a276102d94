"""A real writer process for the crash and lock tests (run as a script, not collected).

    session_writer.py FILE hold            open FILE for writing, print "ready", hold the
                                           lock until stdin closes
    session_writer.py FILE append SIZE     continue FILE, appending messages of about SIZE
                                           bytes forever; print each entry id once written
"""

import sys

from pi_core.protocol.messages import AssistantMessage, TextContent, UserMessage
from pi_core.session import Session, SessionLockedError


def main() -> int:
    path, mode = sys.argv[1], sys.argv[2]
    try:
        session = Session.open(path, cwd="/work/crash")
    except SessionLockedError as exc:
        print(f"locked: {exc}", file=sys.stderr, flush=True)
        return 3
    if mode == "hold":
        print("ready", flush=True)
        sys.stdin.read()
        session.close()
        return 0
    size = int(sys.argv[3])
    n = 0
    while True:
        n += 1
        text = f"{n:08d}" + "x" * size
        if n % 2:
            message = AssistantMessage(content=[TextContent(text)], provider="p", model="m")
        else:
            message = UserMessage(content=[TextContent(text)])
        entry = session.append_message(message)
        print(entry.id, flush=True)


if __name__ == "__main__":
    sys.exit(main())
