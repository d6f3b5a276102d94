"""pi 1.6's ``bash_execution_update``: an RPC ``bash`` command's output streamed as it
arrives, each event carrying the command's ``id``, the deltas adding up to all of it;
ours in-process, and the real pi 1.6 on the same command for the shape."""

import json
import subprocess

import pytest

from support.rpc import RpcClient

COMMAND = "printf 'one\\n'; sleep 0.3; printf 'two\\n'"


def _updates(client, request_id):
    response = client.response_to(request_id, timeout=30)
    assert response["success"] is True, response
    return [e for e in client.events("bash_execution_update")]


def test_a_bash_commands_output_streams_with_its_id(rpc):
    command = rpc.send("bash", command=COMMAND)
    updates = _updates(rpc, command["id"])
    assert "".join(u["delta"] for u in updates) == "one\ntwo\n"
    assert len(updates) >= 2  # as it arrived, not at the end
    assert all(set(u) == {"type", "delta", "id"} and u["id"] == command["id"] for u in updates)


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_updates_have_pi16s_shape(pi):
    from support.programs import node_for, require_real

    (pi.agent_dir / "models.json").write_text(json.dumps(pi.server.models_json("local", apiKey="test-key")))
    process = subprocess.Popen([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                *pi.flags("--mode", "rpc", "--no-session")], cwd=pi.cwd,
                               env={**pi.env, "PI_OFFLINE": "1"}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    client = RpcClient(process, timeout=60)
    try:
        command = client.send("bash", command=COMMAND)
        updates = _updates(client, command["id"])
    finally:
        client.close()
    assert "".join(u["delta"] for u in updates) == "one\ntwo\n"
    assert all(set(u) == {"type", "delta", "id"} and u["id"] == command["id"] for u in updates)
