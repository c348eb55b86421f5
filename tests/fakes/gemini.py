"""Scripted Gemini API (generativelanguage v1beta) model (Gemini CLI with `GOOGLE_GEMINI_BASE_URL`).

`python gemini.py PORT SCRIPT.json [LOG]`; script format and logs: see scripted.py.
The main loop is a request whose function declarations include run_shell_command. Side requests
(router, next-speaker check, loop detection, titles) get JSON when a JSON answer is asked for, else
"ok". A call carries the script's id when it has one. `:streamGenerateContent?alt=sse` streams one event; without alt=sse it is a JSON array.
"""

import json

from scripted import Protocol, serve

SIDE_JSON = {"reasoning": "fake", "next_speaker": "user", "model_choice": "flash", "complexity_reasoning": "fake",
             "complexity_score": 1, "unproductive_state_analysis": "none", "unproductive_state_confidence": 0.0,
             "title": "fake session", "summary": "fake"}


def declared_tools(body) -> set[str]:
    return {declaration.get("name") for tool in body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []}


def wants_json(body) -> bool:
    config = body.get("generationConfig") or {}
    return (config.get("responseMimeType") == "application/json"
            or bool(config.get("responseSchema") or config.get("responseJsonSchema")))


def parts(path, body, step) -> list[dict]:
    if "run_shell_command" in declared_tools(body):
        text = [{"text": step.text}] if step.text else []
        # Gemini CLI names a call `<tool>__<id>` from the id the model gives (the script's), else from the clock
        return text + [{"functionCall": {"name": call["name"], "args": call["args"],
                                         **({"id": call["id"]} if "id" in call else {})}}
                       for call in step.calls]
    return [{"text": json.dumps(SIDE_JSON) if wants_json(body) else step.text}]


def answer(handler, path, body, step, raw) -> None:
    prompt_tokens = max(1, len(raw) // 4)
    if ":countTokens" in path:
        return handler.send_json({"totalTokens": prompt_tokens})
    if ":embedContent" in path or ":batchEmbedContents" in path:
        return handler.send_json({"embedding": {"values": [0.0] * 8}})
    model = path.split("/models/")[-1].split(":")[0] if "/models/" in path else "gemini-fake"
    response = {"candidates": [{"content": {"role": "model", "parts": parts(path, body, step)},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": 5,
                                  "totalTokenCount": prompt_tokens + 5},
                "modelVersion": model, "responseId": "fake"}
    if ":streamGenerateContent" not in path:
        return handler.send_json(response)
    if "alt=sse" not in path:
        return handler.send_json([response])
    handler.start_events()
    handler.send_event(response, end="\r\n\r\n")


PROTOCOL = Protocol(
    is_main_loop=lambda path, body: "run_shell_command" in declared_tools(body),
    spill_pattern=r"(?:For full output see|full output has been saved to):?\s*([^\s\\]+)",
    answer=answer,
)

if __name__ == "__main__":
    serve(PROTOCOL)
