"""Scripted OpenAI chat-completions model (Qwen Code's `--auth-type openai`).

`python openai_chat.py PORT SCRIPT.json [LOG]`; script format and logs: see scripted.py.
Requests that offer tools are the main loop. Streams (`stream: true`) as `chat.completion.chunk`
events ending in a usage chunk and `[DONE]`, else one `chat.completion`.
"""

import json
import time

from scripted import Protocol, new_id, serve

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def tool_calls(step, with_index: bool) -> list[dict]:
    return [{**({"index": k} if with_index else {}), "id": call.get("id") or new_id("call_", 16), "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["args"])}}
            for k, call in enumerate(step.calls)]


def answer(handler, path, body, step, raw) -> None:
    base = {"id": new_id("chatcmpl-", 12), "created": int(time.time()), "model": body.get("model", "fake")}
    finish = "tool_calls" if step.calls else "stop"
    if not body.get("stream"):
        message = ({"role": "assistant", "content": step.text, "tool_calls": tool_calls(step, False)} if step.calls
                   else {"role": "assistant", "content": step.text})
        handler.send_json({**base, "object": "chat.completion", "usage": USAGE,
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
        return
    chunk = {**base, "object": "chat.completion.chunk"}
    delta = {"role": "assistant", **({"tool_calls": tool_calls(step, True)} if step.calls else {"content": step.text})}
    handler.start_events()
    handler.send_event({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    handler.send_event({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    handler.send_event({**chunk, "choices": [], "usage": USAGE})
    handler.send_event("[DONE]")


PROTOCOL = Protocol(
    is_main_loop=lambda path, body: bool(body.get("tools")),
    spill_pattern=None,
    answer=answer,
    get_answer={"data": [{"id": "fake", "object": "model"}]},
)

if __name__ == "__main__":
    serve(PROTOCOL)
