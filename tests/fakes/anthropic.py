"""Scripted Anthropic Messages model (Claude Code with `ANTHROPIC_BASE_URL`).

`python anthropic.py PORT SCRIPT.json [LOG]`; script format and logs: see scripted.py.
The main loop is a request whose tools include Bash or Read (Claude Code's titles, topic checks and
quota probes carry none). Streams the real event sequence (message_start, ping, content blocks with
text/input_json deltas, message_delta, message_stop); `count_tokens` answers bytes ÷ 4.
"""

import json

from scripted import Protocol, new_id, serve


def tokens(raw: bytes) -> int:
    return max(1, len(raw) // 4)


def is_main_loop(path, body) -> bool:
    names = {tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)}
    return bool(names & {"Bash", "Read"})


def blocks(step) -> list[dict]:
    text = [{"type": "text", "text": step.text}] if step.text else []
    return text + [{"type": "tool_use", "id": call.get("id") or new_id("toolu_"), "name": call["name"], "input": call["args"]}
                   for call in step.calls]


def answer(handler, path, body, step, raw) -> None:
    path = path.split("?")[0]
    if path.endswith("/count_tokens"):
        return handler.send_json({"input_tokens": tokens(raw)})
    if not path.endswith("/v1/messages"):
        return handler.send_json({})
    content = blocks(step)
    stop = "tool_use" if step.calls else "end_turn"
    output_tokens = 5 + sum(len(json.dumps(block)) // 4 for block in content)
    usage = {"input_tokens": tokens(raw), "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
             "output_tokens": 1}
    message = {"id": new_id("msg_"), "type": "message", "role": "assistant", "model": body.get("model", "claude-fake"),
               "stop_reason": None, "stop_sequence": None}
    if not body.get("stream"):
        return handler.send_json({**message, "content": content, "stop_reason": stop,
                                  "usage": {**usage, "output_tokens": output_tokens}})
    send = handler.send_event
    handler.start_events()
    send({"type": "message_start", "message": {**message, "content": [], "usage": usage}}, "message_start")
    send({"type": "ping"}, "ping")
    for index, block in enumerate(content):
        if block["type"] == "text":
            start, key, kind, payload, size = {"type": "text", "text": ""}, "text", "text_delta", block["text"], 40
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            key, kind, payload, size = "partial_json", "input_json_delta", json.dumps(block["input"]), 60
        send({"type": "content_block_start", "index": index, "content_block": start}, "content_block_start")
        for at in range(0, len(payload), size):
            send({"type": "content_block_delta", "index": index, "delta": {"type": kind, key: payload[at:at + size]}},
                 "content_block_delta")
        send({"type": "content_block_stop", "index": index}, "content_block_stop")
    send({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
          "usage": {"output_tokens": output_tokens}}, "message_delta")
    send({"type": "message_stop"}, "message_stop")


PROTOCOL = Protocol(
    is_main_loop=is_main_loop,
    spill_pattern=r"(?:Full output saved to|Output has been saved to):?\s*([^\s\\]+)",
    answer=answer,
)

if __name__ == "__main__":
    serve(PROTOCOL)
