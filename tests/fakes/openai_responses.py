"""Scripted OpenAI Responses API model (Codex with a `wire_api = "responses"` provider).

`python openai_responses.py PORT SCRIPT.json [LOG]`; script format and logs: see scripted.py.
Requests that carry tools are the main loop. Streams response.created, output_item.added/done
(with an output_text.delta for messages) and response.completed; GET /v1/models lists nothing.
"""

import json
import time

from scripted import Protocol, new_id, serve


def output_items(step) -> list[dict]:
    text = [{"type": "message", "id": new_id("msg_"), "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": step.text, "annotations": []}]}] if step.text else []
    return text + [{"type": "function_call", "id": new_id("fc_"), "call_id": call.get("id") or new_id("call_"),
                    "name": call["name"], **({"namespace": call["namespace"]} if "namespace" in call else {}),
                    "arguments": json.dumps(call["args"]), "status": "completed"} for call in step.calls]


def answer(handler, path, body, step, raw) -> None:
    if not path.split("?")[0].endswith("/responses"):
        return handler.send_json({})
    items = output_items(step)
    prompt_tokens = max(1, len(raw) // 4)
    response = {"id": new_id("resp_"), "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": body.get("model", "fake"), "output": items,
                "usage": {"input_tokens": prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": prompt_tokens + 5}}
    if not body.get("stream"):
        return handler.send_json(response)
    handler.start_events()
    sequence = iter(range(1 << 30))

    def send(event: dict) -> None:
        handler.send_event({**event, "sequence_number": next(sequence)}, event["type"])

    send({"type": "response.created", "response": {**response, "status": "in_progress", "output": [], "usage": None}})
    for index, item in enumerate(items):
        if item["type"] == "message":
            send({"type": "response.output_item.added", "output_index": index,
                  "item": {**item, "content": [], "status": "in_progress"}})
            send({"type": "response.output_text.delta", "output_index": index, "item_id": item["id"],
                  "content_index": 0, "delta": item["content"][0]["text"]})
        else:
            send({"type": "response.output_item.added", "output_index": index,
                  "item": {**item, "arguments": "", "status": "in_progress"}})
        send({"type": "response.output_item.done", "output_index": index, "item": item})
    send({"type": "response.completed", "response": response})


PROTOCOL = Protocol(
    is_main_loop=lambda path, body: bool(body.get("tools")),
    spill_pattern=None,
    answer=answer,
    get_answer={"object": "list", "data": [], "models": []},
)

if __name__ == "__main__":
    serve(PROTOCOL)
