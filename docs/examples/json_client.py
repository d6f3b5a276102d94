"""Drive `pi --mode json` from Python: start it, read one JSON event per line.

Run it: python docs/examples/json_client.py
(It loads offline_model.py with -e, so it needs no network and no key.)
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

command = [
    sys.executable, "-m", "pi_plugins.cli",  # the same as the `pi` script
    "--mode", "json", "--no-session",
    "-e", str(HERE / "offline_model.py"), "--model", "scripted/scripted-model",
    "Say hello",
]
with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as pi:
    header = json.loads(pi.stdout.readline())
    print("session header:", header["type"], "version", header["version"])
    for line in pi.stdout:
        event = json.loads(line)
        if event["type"] == "message_update":
            update = event["assistantMessageEvent"]
            if update["type"] == "text_delta":
                print("delta:", repr(update["delta"]))
        elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
            print("final:", event["message"]["content"][0]["text"])
        elif event["type"] in ("agent_start", "agent_end"):
            print(event["type"])
print("exit code:", pi.returncode)
