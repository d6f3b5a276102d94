"""A budget in RPC mode: the client gets budget_exceeded, then agent_end, and no request
goes out; the session keeps what it spent for the next prompt."""

from support.llm_server import Reply


def test_rpc_gets_budget_exceeded_then_agent_end_and_the_next_prompt_stops_at_once(start_rpc, server):
    rpc = start_rpc("--max-turns", "2")
    server.push(Reply(text="Looking.", tool_calls=[("ls", {"path": "."})]),
                Reply(text="Again.", tool_calls=[("ls", {"path": "."})]), Reply(text="unsent"))
    rpc.response_to(rpc.send("prompt", message="look"))
    end = rpc.event("agent_end")
    exceeded = rpc.event("budget_exceeded")
    assert exceeded == {"type": "budget_exceeded", "limit": "turns", "spent": 2, "max": 2}
    assert rpc.position(end) == rpc.position(exceeded) + 1
    assert len(server.requests) == 2
    rpc.event("agent_settled")
    after = len(rpc.lines)
    rpc.response_to(rpc.send("prompt", message="more"))
    rpc.wait_for(lambda line: line["type"] == "agent_settled", after=after)
    assert [l["type"] for l in rpc.lines[after:]][-3:] == ["budget_exceeded", "agent_end", "agent_settled"]
    assert len(server.requests) == 2


def test_an_rpc_client_is_told_once_that_a_model_without_prices_counts_no_cost(start_rpc, server):
    rpc = start_rpc("--max-cost", "1", "--max-turns", "2")
    server.push(Reply(text="Looking.", tool_calls=[("ls", {"path": "."})]), Reply(text="Done."))
    rpc.response_to(rpc.send("prompt", message="look"))
    rpc.event("agent_end")
    said = [l for l in rpc.lines if l.get("method") == "notify" and "has no prices" in l.get("message", "")]
    assert len(said) == 1 and said[0]["notifyType"] == "warning"
