"""What the Claude, Codex and Gemini record.py scripts share.

The scripts run as plain files (`python3 tests/recordings/<client>/record.py`), so they import this module by
path: they put this folder on sys.path first.  A scratch copy of a client folder needs this file beside it
(in the copy's parent folder), as ../dumps/make_dumps.py does.
"""
import json, os, shutil, signal, subprocess, sys, time
from contextlib import contextmanager

# deterministic input files created in the work dir before each run
FILES = {
    "notes.txt": "".join("note %03d: the quick brown fox jumps over the lazy dog\n" % i for i in range(1, 121)),
    "config.ini": "[main]\nname = demo\nlevel = 3\n\n[paths]\ndata = ./data\n",
}
# The repo's own scripted model servers, and where `npm install --prefix .clients ...` puts the clients
# (DOCTOR_REPO names the checkout when a scratch copy of the scripts runs, as ../dumps/make_dumps.py does).
REPO = os.environ.get("DOCTOR_REPO") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKES = os.path.join(REPO, "tests", "fakes")
CLIENTS = os.path.join(REPO, ".clients", "node_modules")
MID = "python3 -c \"[print('row %05d ' % i + 'x' * 40) for i in range(1, 2001)]\""   # 2000 x 51 chars = 102,000 B


def fixed_rows(count, cyrillic=False):
    """A shell command whose output is fixed: `count` rows of 51 chars, written at once, flushed, and then a
    second's sleep before exiting (a client that reads output as it comes still gets all of it).
    ASCII rows (`row 00001 xxx…`) are 51 bytes; Cyrillic ones (`ряд 00001 жжж…`) are 51 chars in 94 bytes."""
    word, fill = ("\\u0440\\u044f\\u0434", "\\u0436") if cyrillic else ("row", "x")
    return ("python3 -c \"import sys, time; sys.stdout.write(''.join('%s %%05d ' %% i + '%s' * 40 + '\\n' "
            "for i in range(1, %d))); sys.stdout.flush(); time.sleep(1)\"" % (word, fill, count + 1))


def scratch_root(client):
    """<CREC_ROOT>/<client>: the scenarios' throwaway folders."""
    return os.path.join(os.environ.get("CREC_ROOT", "/tmp/crec"), client)


def subst(obj, w):
    return json.loads(json.dumps(obj).replace("{W}", w))


def numbered_calls(steps, prefix, digits):
    """`steps` with each tool call given an id, numbered from 1 in order (`<prefix>000…1`): the scripted model
    hands the client these ids, so recordings of the same steps line up call by call."""
    count, out = 0, []
    for step in steps:
        if isinstance(step, list):
            numbered = []
            for call in step:
                count += 1
                numbered.append({**call, "id": f"{prefix}{count:0{digits}d}"})
            out.append(numbered)
        else:
            out.append(step)
    return out


def prepare(root, here, name, steps, files, scratch=None):
    """Wipe <root>/<scratch or name>, create its home/ and w/ (with `files` in w), write script.json (steps with
    {W} = w) to <here>/<name>/ and copy it to the scratch folder.  Returns (base, home, w, out, script path).
    Recordings meant to be compared with each other share one `scratch` name: same cwd, same HOME, so every
    path a client writes into a result has the same length in all of them."""
    base = os.path.join(root, scratch or name)
    shutil.rmtree(base, ignore_errors=True)
    home, w = os.path.join(base, "home"), os.path.join(base, "w")
    os.makedirs(home), os.makedirs(w)
    for fn, txt in files.items():
        with open(os.path.join(w, fn), "w") as f:
            f.write(txt)
    script = {"steps": subst(steps, w)}
    out = os.path.join(here, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "script.json"), "w") as f:
        json.dump(script, f, indent=1)
    spath = os.path.join(base, "script.json")
    shutil.copy(os.path.join(out, "script.json"), spath)
    return base, home, w, out, spath


@contextmanager
def fake_server(fake, port, script_path, log_path):
    """Run the fake model server `fake` on the loopback `port` for the duration of the block."""
    srv = subprocess.Popen([sys.executable, fake, str(port), script_path, log_path])
    time.sleep(1.0)
    try:
        yield srv
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()


def client_env(home, **extra):
    """A clean environment for the client: PATH, HOME, TERM=dumb, LANG=C.UTF-8, plus `extra`."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TERM": "dumb", "LANG": "C.UTF-8", **extra}


def run_client(name, base, args, cwd, env, stderr_tail=800, **kwargs):
    """Run the client once (timeout 300 s), keep its output in <base>/client.out and print its tail."""
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kwargs)
    with open(os.path.join(base, "client.out"), "w") as f:
        f.write("rc=%d\n--stdout--\n%s\n--stderr--\n%s" % (p.returncode, p.stdout, p.stderr))
    print(name, "rc", p.returncode, p.stdout[-300:], p.stderr[-stderr_tail:])
    return p


def walk_files(top):
    """Every file below `top`, folder by folder as os.walk goes, names sorted within a folder."""
    for dp, dn, fns in os.walk(top):
        for fn in sorted(fns):
            yield os.path.join(dp, fn)


def copy_session_files(sources, home, out):
    """Copy `sources` (paths under `home`) byte-exact, modes kept, to <out>/home/ (wiped first).
    Returns their names as "home/<path relative to home>", in the order given."""
    dst_home = os.path.join(out, "home")
    shutil.rmtree(dst_home, ignore_errors=True)
    files = []
    for src in sources:
        rel = os.path.relpath(src, home)
        dst = os.path.join(dst_home, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
        files.append("home/" + rel)
    return files


def write_meta(out, client, version, sid, w, home, files):
    """<out>/meta.json, keeping the notes of an existing one."""
    mpath = os.path.join(out, "meta.json")
    notes = json.load(open(mpath)).get("notes", "") if os.path.exists(mpath) else ""
    meta = {"client": client, "clientVersion": version, "sessionId": sid, "cwd": w, "home": home,
            "files": sorted(files), "notes": notes}
    with open(mpath, "w") as f:
        json.dump(meta, f, indent=1)


def main(scenarios, record):
    """Record the scenarios named on the command line, or all of them."""
    for n in sys.argv[1:] or list(scenarios):
        record(n)


def _u16(text):
    return len(text.encode("utf-16-le")) // 2


def _text_of(content):
    """A tool result's text as a request carries it: a string, a list of {"text": ...} parts, or a JSON object."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if isinstance(content, dict):
        return content["output"] if isinstance(content.get("output"), str) else json.dumps(content)
    return ""


def request_results(body):
    """(id, text) of every tool result a request body hands the model: Anthropic tool_result blocks, Gemini
    functionResponse parts, Responses function_call_output items."""
    for message in body.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                yield block.get("tool_use_id"), _text_of(block.get("content"))
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if response:
                yield response.get("id") or response.get("name"), _text_of(response.get("response"))
    for item in body.get("input") if isinstance(body.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            yield item.get("call_id"), _text_of(item.get("output"))


def write_received(bodies_path, out):
    """<out>/received.json: what the scripted model server was sent, from its `<LOG>.bodies` (one
    `<path>\\t<body>` a line): each request's size, and for every tool result the UTF-16 length and head of
    its text in the first and in the last request that carried it. Read straight from the HTTP bodies,
    independent of the client's session files and of doctor."""
    requests, results = [], {}
    with open(bodies_path, "rb") as f:
        for index, line in enumerate(f):
            path, _, raw = line.rstrip(b"\n").partition(b"\t")
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            requests.append({"path": path.decode(), "bytes": len(raw)})
            for rid, text in request_results(body if isinstance(body, dict) else {}):
                seen = {"request": index, "chars": _u16(text), "head": text[:160]}
                results.setdefault(rid, {"first": seen})["last"] = seen
    with open(os.path.join(out, "received.json"), "w") as f:
        json.dump({"source": "the scripted model server's request bodies", "requests": requests,
                   "results": results}, f, indent=1)
