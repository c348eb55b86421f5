#!/usr/bin/env python3
"""Re-record the Codex CLI test sessions against the scripted fake Responses API server.

Usage: python3 record.py [SCENARIO ...]      (default: all scenarios)
Env:   CODEX_BIN     codex binary (default: the musl binary of @openai/codex-linux-x64 under /opt/clients)
       FAKE_RESPONSES path of fake_responses.py (default /work/shared/tools/fake_responses.py)
       CREC_ROOT     scratch root (default /tmp/crec)

Each scenario runs with HOME=/tmp/crec/codex/<scenario>/home and CODEX_HOME=$HOME/.codex (config.toml with a
[model_providers.fake] entry, wire_api = "responses"), cwd /tmp/crec/codex/<scenario>/w, its own loopback port.
Only $CODEX_HOME/sessions/** is copied (byte-exact, modes kept) to <here>/<scenario>/home/.codex/sessions/.
After re-recording, regenerate the expected figures with the independent snippet:
    python3 <scenario>/expected.method.txt <scenario> > <scenario>/expected.json
and review meta.json notes (they quote ids, spill names and sizes of the committed recording).
"""
import json, os, shutil, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CODEX_BIN", "/opt/clients/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
FAKE = os.environ.get("FAKE_RESPONSES", "/work/shared/tools/fake_responses.py")
ROOT = os.path.join(os.environ.get("CREC_ROOT", "/tmp/crec"), "codex")

FILES = {
    "notes.txt": "".join("note %03d: the quick brown fox jumps over the lazy dog\n" % i for i in range(1, 121)),
    "config.ini": "[main]\nname = demo\nlevel = 3\n\n[paths]\ndata = ./data\n",
}
MID = "python3 -c \"[print('row %05d ' % i + 'x' * 40) for i in range(1, 2001)]\""   # 2000 x 51 chars = 102,000 B
CONFIG = """model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:%d/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[otel]
exporter = "none"
"""

SCENARIOS = {
    "big-outputs": {"port": 18331, "steps": [
        [{"name": "exec_command", "args": {"cmd": "seq 1 200000"}}],
        [{"name": "exec_command", "args": {"cmd": MID, "max_output_tokens": 20000}}],
        [{"name": "exec_command", "args": {"cmd": "echo hello; seq 1 5"}}],
        [{"name": "exec_command", "args": {"cmd": "cat notes.txt"}}],
        "All done: big outputs recorded."]},
    "parallel-and-errors": {"port": 18332, "steps": [
        [{"name": "exec_command", "args": {"cmd": "seq 1 3"}},
         {"name": "exec_command", "args": {"cmd": "python3 -c \"print('abc ' * 50)\""}},
         {"name": "exec_command", "args": {"cmd": "cat config.ini"}},
         {"name": "exec_command", "args": {"cmd": "grep -n 'note 01' notes.txt"}}],
        [{"name": "exec_command", "args": {"cmd": "echo to-stderr >&2; echo partial; exit 3"}},
         {"name": "exec_command", "args": {"cmd": "cat missing.txt"}}],
        "All done: parallel and errors recorded."]},
}


def subst(obj, w):
    return json.loads(json.dumps(obj).replace("{W}", w))


def record(name):
    sc = SCENARIOS[name]
    base = os.path.join(ROOT, name)
    shutil.rmtree(base, ignore_errors=True)
    home, w = os.path.join(base, "home"), os.path.join(base, "w")
    ch = os.path.join(home, ".codex")
    os.makedirs(ch), os.makedirs(w)
    with open(os.path.join(ch, "config.toml"), "w") as f:
        f.write(CONFIG % sc["port"])
    for fn, txt in FILES.items():
        with open(os.path.join(w, fn), "w") as f:
            f.write(txt)
    script = {"steps": subst(sc["steps"], w)}
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "script.json"), "w") as f:
        json.dump(script, f, indent=1)
    spath = os.path.join(base, "script.json")
    shutil.copy(os.path.join(out, "script.json"), spath)
    log = os.path.join(base, "fake.log")
    srv = subprocess.Popen([sys.executable, FAKE, str(sc["port"]), spath, log])
    time.sleep(1.0)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "CODEX_HOME": ch, "TERM": "dumb", "LANG": "C.UTF-8",
           "FAKE_API_KEY": "sk-fake", "OPENAI_API_KEY": "sk-fake", "RUST_LOG": "error"}
    try:
        p = subprocess.run([BIN, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "go"],
                           cwd=w, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        with open(os.path.join(base, "client.out"), "w") as f:
            f.write("rc=%d\n--stdout--\n%s\n--stderr--\n%s" % (p.returncode, p.stdout, p.stderr))
        print(name, "rc", p.returncode, p.stdout[-300:], p.stderr[-800:])
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()
    dst_home = os.path.join(out, "home")
    shutil.rmtree(dst_home, ignore_errors=True)
    files, sid = [], None
    for dp, dn, fns in os.walk(os.path.join(ch, "sessions")):
        for fn in sorted(fns):
            src = os.path.join(dp, fn)
            rel = os.path.relpath(src, home)
            dst = os.path.join(dst_home, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
            files.append("home/" + rel)
            if fn.startswith("rollout-") and fn.endswith(".jsonl"):
                with open(src) as f:
                    first = json.loads(f.readline())
                sid = (first.get("payload") or {}).get("id") or sid
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, env=env).stdout.strip().split()[-1]
    mpath = os.path.join(out, "meta.json")
    notes = json.load(open(mpath)).get("notes", "") if os.path.exists(mpath) else ""
    meta = {"client": "codex", "clientVersion": version, "sessionId": sid, "cwd": w, "home": home,
            "files": sorted(files), "notes": notes}
    with open(mpath, "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    for n in sys.argv[1:] or list(SCENARIOS):
        record(n)
