#!/usr/bin/env python3
"""Record ONE scripted Qwen Code 0.24.4 session under several settings, for `doctor whatif`.

    python3 tests/recordings/qwen-whatif/record.py [VARIANT ...]     # default: all

Every variant runs the same script (script.json) against the scripted model (tests/fakes/openai_chat.py)
with the same working directory, HOME and call ids, so the recordings differ only by what the settings
did to each result. Per variant folder:
- `settings.json`: `$HOME/.qwen/settings.json` while recording (absent: none);
- `recording.tar.gz`: `session.jsonl` and `tmp/` (the session and its spill files, byte for byte; paths
  inside them are under /tmp/qrec-whatif, so keep that root). Packed because the outputs are large and
  repetitive (1.4–2 MB a variant, ~100 KB packed); tests unpack them into a temporary folder;
- `expected.json`: Qwen's own `--resume <id> -p "/doctor memory --json"` answer (its
  `toolResultRetention`), with the recording's settings;
- `requests.json`: what reached the model: for every main-loop request the scripted model received, each
  `role: "tool"` message's `tool_call_id` and its content's JavaScript length (from the server's request
  log), and the last request's tool messages' sha256, so a test can compare text without storing it twice.

Tool output is deterministic: `gen.py` prints fixed text, flushes and sleeps a second before it exits (a
quick command can otherwise record `Output: (empty)`); the files read, grepped and globbed are made by
`setup`; the web page is served by `python3 -m http.server` on loopback, and its summarizing side request
fails on purpose (`sideFail`), so web_fetch returns the raw page text as Qwen does when summarizing fails.
Needs node and python3; the client is `.reference/` (QWEN_CLI overrides).
"""
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "qwen"))
import record as qrec  # noqa: E402  (the helpers of the main Qwen recordings: client, fake model, doctor run)

ROOT = os.environ.get("QREC_WHATIF_ROOT", "/tmp/qrec-whatif")
W = os.path.join(ROOT, "w")
HOME = os.path.join(ROOT, "home")
PORT = 18400
HTTP_PORT = 18401

VARIANTS = {
    "default": None,
    "threshold-10000": {"tools": {"truncateToolOutputThreshold": 10000}},
    "threshold-50000": {"tools": {"truncateToolOutputThreshold": 50000}},
    "threshold-100000": {"tools": {"truncateToolOutputThreshold": 100000}},
    "threshold-off": {"tools": {"truncateToolOutputThreshold": -1}},
    "lines-200": {"tools": {"truncateToolOutputLines": 200}},
    "batch-60000": {"tools": {"toolOutputBatchBudget": 60000}},
}

GEN_PY = r'''import sys, time
mode = sys.argv[1]
if mode == "lines":                      # lines N WIDTH TAG [EXIT]: N numbered lines of WIDTH chars
    n, width, tag = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    for i in range(n):
        print(("%s %05d " % (tag, i)).ljust(width, tag[0]))
    code = int(sys.argv[5]) if len(sys.argv) > 5 else 0
elif mode == "oneline":                  # oneline N TAG: one line of N chars
    print(sys.argv[3] + "o" * (int(sys.argv[2]) - len(sys.argv[3])))
    code = 0
sys.stdout.flush()
time.sleep(1)
sys.exit(code)
'''


def setup(w):
    qrec.write(os.path.join(w, "gen.py"), GEN_PY)
    qrec.make_big_text(os.path.join(w, "big.txt"), lines=3000, width=120)
    qrec.make_big_text(os.path.join(w, "medium.txt"), lines=600, width=60)
    qrec.make_grep_tree(w)
    for i in range(30):
        qrec.write(os.path.join(w, "few", "f%02d.txt" % i), "nothing here\nrare %02d find me\nnothing\n" % i)
    qrec.make_deep_tree(w)
    for i in range(12):
        path = os.path.join(w, "small", "s%02d.md" % i)
        qrec.write(path, "small %d\n" % i)
        os.utime(path, (1700000000 + i, 1700000000 + i))
    page = "<html><head><meta charset='utf-8'><title>whatif</title></head><body>\n" + "".join(
        "<p>paragraph %04d %s</p>\n" % (i, "web text " * 5) for i in range(1600)) + "</body></html>\n"
    qrec.write(os.path.join(w, "site", "page.html"), page)


def sh(call_id, cmd, desc):
    return {"id": call_id, "name": "run_shell_command", "args": {"command": cmd, "description": desc}}


def tool(call_id, name, **args):
    return {"id": call_id, "name": name, "args": args}


def script():
    mixed = [
        sh("call_w01_shell_12k", "python3 gen.py lines 400 30 s1", "12k in 400 lines"),
        sh("call_w02_shell_60k", "python3 gen.py lines 1500 40 s2", "60k in 1500 lines"),
        sh("call_w03_shell_oneline", "python3 gen.py oneline 35000 one", "one 35k line"),
        sh("call_w04_shell_error", "python3 gen.py lines 800 40 e1 3", "33k, exit 3"),
        tool("call_w05_read_big", "read_file", file_path=W + "/big.txt"),
        tool("call_w06_read_range", "read_file", file_path=W + "/medium.txt", offset=100, limit=50),
        tool("call_w07_grep_many", "grep_search", pattern="needle", path=W + "/grep"),
        tool("call_w08_grep_few", "grep_search", pattern="rare", path=W + "/few"),
        tool("call_w09_glob_deep", "glob", pattern="**/*.txt", path=W + "/deep"),
        tool("call_w10_glob_small", "glob", pattern="*.md", path=W + "/small"),
        tool("call_w11_web_fetch", "web_fetch", url="http://127.0.0.1:%d/page.html" % HTTP_PORT,
             prompt="Return the page text"),
        tool("call_w12_read_medium", "read_file", file_path=W + "/medium.txt"),
    ]
    # Nine parallel outputs of 13,800 to 29,200 chars (each under the shell's 30,000): 233,500 chars in one
    # batch, so the 200,000 batch budget water-fills them (the two smallest whole, the others cut).
    widths = (50, 80, 95, 100, 104, 106, 106, 107, 107)
    batch = [sh("call_b%02d_shell_w%d" % (i + 1, width), "python3 gen.py lines 270 %d b%d" % (width, i + 1),
                "batch %d" % (i + 1)) for i, width in enumerate(widths)]
    return {"steps": [mixed, batch, "All done."], "sideFail": ["Extract and summarize the requested information"]}


def tool_messages(body):
    """(tool_call_id, JS length, sha256) of every role:tool message of one chat-completions request."""
    out = []
    for message in body.get("messages", []):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if isinstance(content, list):  # content parts: the text parts, joined as sent
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        text = content if isinstance(content, str) else json.dumps(content)
        out.append({"toolCallId": message.get("tool_call_id"), "chars": len(text.encode("utf-16-le")) // 2,
                    "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()})
    return out


def requests_seen(log_path):
    requests = []
    with open(log_path + ".bodies", "rb") as f:
        for line in f:
            path, _, raw = line.rstrip(b"\n").partition(b"\t")
            body = json.loads(raw)
            if not body.get("tools"):
                continue  # side requests (titles, the failed summary) do not carry the history
            requests.append({"path": path.decode(), "toolMessages": tool_messages(body)})
    return requests


def pack(out, session_bytes, tmpdir):
    """`recording.tar.gz` with `session.jsonl` and the spill files under `tmp/`, reproducible (no times, no owners)."""
    def add(tar, name, data, mode=0o644):
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), mode, 0
        tar.addfile(info, io.BytesIO(data))

    with open(os.path.join(out, "recording.tar.gz"), "wb") as raw, \
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped, tarfile.open(fileobj=zipped, mode="w") as tar:
        add(tar, "session.jsonl", session_bytes)
        for root, dirs, files in os.walk(tmpdir):
            dirs.sort()
            for name in sorted(files):
                if name == "logs.json" or name.endswith(".lock"):
                    continue
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    add(tar, os.path.join("tmp", os.path.relpath(path, tmpdir)), f.read(), os.stat(path).st_mode & 0o777)


def record(name):
    settings = VARIANTS[name]
    out = os.path.join(HERE, name)
    if os.path.exists(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(W)
    os.makedirs(HOME)
    setup(W)
    script_path = os.path.join(ROOT, "script.json")
    qrec.write(script_path, json.dumps(script(), indent=1) + "\n")
    qrec.set_settings(HOME, settings)
    log = open(os.path.join(ROOT, "client.log"), "ab")
    llm_log = os.path.join(ROOT, "llm.log")
    procs = [qrec.start_fake(PORT, script_path, llm_log),
             subprocess.Popen([sys.executable, "-m", "http.server", str(HTTP_PORT), "--bind", "127.0.0.1",
                               "--directory", os.path.join(W, "site")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    time.sleep(1)
    try:
        qrec.run_turn({}, HOME, W, PORT, "go", None, log)
        sid = qrec.find_session(HOME, W)
        cdir = qrec.chats_dir(HOME, W)
        jsonl = os.path.join(cdir, sid + ".jsonl")
        with open(jsonl, "rb") as f:
            recorded = f.read()
        requests = requests_seen(llm_log)
        answer = qrec.run_doctor(HOME, W, PORT, sid, {}, log)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.makedirs(out)
        tmpdir = os.path.join(HOME, ".qwen", "tmp", hashlib.sha256(W.encode()).hexdigest())
        pack(out, recorded, tmpdir)
        if settings is not None:
            qrec.write(os.path.join(out, "settings.json"), json.dumps(settings, indent=2) + "\n")
        qrec.write(os.path.join(out, "expected.json"), json.dumps(
            {"toolResultRetention": answer["toolResultRetention"], "sessionId": answer.get("sessionId"),
             "qwenVersion": answer.get("qwenVersion")}, indent=2) + "\n")
        qrec.write(os.path.join(out, "requests.json"), json.dumps(requests, indent=1) + "\n")
        with open(llm_log + ".bodies", "rb") as f:
            last_main = [line for line in f if b'"tools"' in line][-1]
        with open(os.path.join(out, "last-request.json.gz"), "wb") as raw, \
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(last_main.partition(b"\t")[2])
        text = recorded.decode("utf-8", "surrogatepass")
        problems = ["shell recorded 'Output: (empty)'"] if "Output: (empty)" in text else []
        print("  [%s] %s %s" % (name, json.dumps(answer["toolResultRetention"]), problems), flush=True)
        return not problems
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        log.close()


def main():
    names = sys.argv[1:] or list(VARIANTS)
    qrec.write(os.path.join(HERE, "script.json"), json.dumps(script(), indent=1) + "\n")
    qrec.write(os.path.join(HERE, "gen.py"), GEN_PY)
    ok = True
    for name in names:
        print("== %s" % name, flush=True)
        for attempt in range(3):
            if record(name):
                break
        else:
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
