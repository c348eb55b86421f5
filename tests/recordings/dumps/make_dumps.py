#!/usr/bin/env python3
"""Build the message-dump fixtures from request bodies that real clients sent.

Step 1 (capture, needs the clients under /opt/clients): re-run the `parallel-and-errors` scenario of
../claude, ../codex and ../gemini from a scratch copy of their record.py (so the committed recordings are
untouched), with the fake model server wrapped by capture_fake.py, which saves every request body:

    python3 make_dumps.py capture /tmp/dumpcap        # writes /tmp/dumpcap/cap/<agent>/NNN.json

Step 2 (build): take each agent's last main-loop request (the one holding the most messages: every request
repeats the whole conversation) and write it here with its `tools` array dropped (tool schemas, not history):
    anthropic.request.json          Claude Code -> Anthropic Messages   {model, messages, system, ...}
    openai-responses.request.json   Codex CLI   -> OpenAI Responses     {model, input, ...}
    gemini-api.request.json         Gemini CLI  -> Gemini API           {contents, systemInstruction, ...}
No client here speaks OpenAI Chat Completions any more, so the Codex request is also converted, item by item:
    openai-chat.request.json        {model, messages, tools}: message -> {role, content: text}, function_call ->
                                    assistant tool_calls (consecutive calls merged into one assistant message),
                                    function_call_output -> {role: tool, tool_call_id, content}; tools keep names only
    openai-chat.messages.jsonl      the same messages, one per line
expected.json holds, per dump, figures computed here straight from the bodies (not with doctor): tool results,
sum and largest of each result's text length in UTF-16 units, per-tool counts, errors.

    python3 make_dumps.py build /tmp/dumpcap
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDINGS = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(RECORDINGS))
AGENTS = {"claude": ("FAKE_ANTHROPIC", "anthropic.py"), "codex": ("FAKE_RESPONSES", "openai_responses.py"),
          "gemini": ("FAKE_GEMINI", "gemini.py")}
SCENARIO = "parallel-and-errors"


def capture(scratch):
    for agent, (variable, fake) in AGENTS.items():
        shutil.rmtree(os.path.join(scratch, agent), ignore_errors=True)
        shutil.copytree(os.path.join(RECORDINGS, agent), os.path.join(scratch, agent))
        shutil.copy(os.path.join(RECORDINGS, "recording_kit.py"), scratch)  # record.py imports it from ..
        env = dict(os.environ, CAPTURE_FAKE=os.path.join(REPO, "tests", "fakes", fake), DOCTOR_REPO=REPO,
                   CAPTURE_DIR=os.path.join(scratch, "cap", agent), CREC_ROOT=os.path.join(scratch, "crec"))
        env[variable] = os.path.join(HERE, "capture_fake.py")
        subprocess.run([sys.executable, os.path.join(scratch, agent, "record.py"), SCENARIO], env=env, check=True)


def last_request(scratch, agent, key):
    folder = os.path.join(scratch, "cap", agent)
    bodies = [json.load(open(os.path.join(folder, name))) for name in sorted(os.listdir(folder)) if name.endswith(".json")]
    body = max((b for b in bodies if b.get("tools")), key=lambda b: len(b[key]))
    return {k: v for k, v in body.items() if k != "tools"}


def to_chat(body):
    messages = []
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "message":
            text = "".join(part.get("text", "") for part in item["content"])
            messages.append({"role": item["role"], "content": text})
        elif kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item["arguments"]}}
            if messages and messages[-1]["role"] == "assistant" and "tool_calls" in messages[-1]:
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
    names = sorted({c["function"]["name"] for m in messages for c in m.get("tool_calls", [])})
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]
    return {"model": body["model"], "messages": messages, "tools": tools}


def u16(text):
    return len(text.encode("utf-16-le")) // 2


def figures(results):
    """results: [(tool, text, is_error)]"""
    per_tool = {}
    for tool, _, _ in results:
        per_tool[tool] = per_tool.get(tool, 0) + 1
    return {"toolResults": len(results), "rawChars": sum(u16(t) for _, t, _ in results),
            "largestRawChars": max([u16(t) for _, t, _ in results] or [0]), "perTool": per_tool,
            "errors": sum(e for _, _, e in results)}


def anthropic_results(body):
    names = {b["id"]: b["name"] for m in body["messages"] if isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "tool_use"}
    out = []
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                c = b["content"]
                text = c if isinstance(c, str) else "".join(x.get("text", "") for x in c)
                out.append((names[b["tool_use_id"]], text, bool(b.get("is_error"))))
    return out


def responses_results(body):
    names = {i["call_id"]: i["name"] for i in body["input"] if i.get("type") == "function_call"}
    return [(names[i["call_id"]], i["output"], False) for i in body["input"] if i.get("type") == "function_call_output"]


def gemini_results(body):
    out = []
    for c in body["contents"]:
        for p in c["parts"]:
            if "functionResponse" in p:
                r = p["functionResponse"]["response"]
                out.append((p["functionResponse"]["name"], r.get("output", r.get("error", "")), "output" not in r))
    return out


def build(scratch):
    claude = last_request(scratch, "claude", "messages")
    codex = last_request(scratch, "codex", "input")
    gemini = last_request(scratch, "gemini", "contents")
    chat = to_chat(codex)
    dumps = {"anthropic.request.json": claude, "openai-responses.request.json": codex,
             "gemini-api.request.json": gemini, "openai-chat.request.json": chat}
    for name, body in dumps.items():
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            json.dump(body, f, indent=1, ensure_ascii=False)
    with open(os.path.join(HERE, "openai-chat.messages.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(m, ensure_ascii=False) + "\n" for m in chat["messages"])
    chat_results = responses_results(codex)
    expected = {"anthropic.request.json": figures(anthropic_results(claude)),
                "openai-responses.request.json": figures(chat_results),
                "gemini-api.request.json": figures(gemini_results(gemini)),
                "openai-chat.request.json": figures(chat_results),
                "openai-chat.messages.jsonl": figures(chat_results)}
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    {"capture": capture, "build": build}[sys.argv[1]](sys.argv[2])
