#!/usr/bin/env python3
"""Re-record the Claude Code test sessions against the scripted fake Anthropic server.

Usage: python3 record.py [SCENARIO ...]      (default: all scenarios)
Env:   CLAUDE_BIN   native claude binary (default: the npm platform package under /opt/clients)
       FAKE_ANTHROPIC  path of fake_anthropic.py (default /work/shared/tools/fake_anthropic.py)
       CREC_ROOT    scratch root (default /tmp/crec)

Each scenario runs in a throwaway HOME=/tmp/crec/claude/<scenario>/home (CLAUDE_CONFIG_DIR=$HOME/.claude),
cwd /tmp/crec/claude/<scenario>/w, on its own loopback port.  Only the session data under
$HOME/.claude/projects/ is copied (byte-exact, modes kept) to <here>/<scenario>/home/.claude/projects/.
script.json is written next to it, and meta.json (notes kept from an existing meta.json).
After re-recording, regenerate the expected figures with the independent snippet:
    python3 <scenario>/expected.method.txt <scenario> > <scenario>/expected.json
and review meta.json notes (they quote ids, spill names and sizes of the committed recording).
"""
import json, os, shutil, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CLAUDE_BIN", "/opt/clients/node_modules/@anthropic-ai/claude-code-linux-x64/claude")
FAKE = os.environ.get("FAKE_ANTHROPIC", "/work/shared/tools/fake_anthropic.py")
ROOT = os.path.join(os.environ.get("CREC_ROOT", "/tmp/crec"), "claude")

# deterministic input files created in the work dir before each run
FILES = {
    "notes.txt": "".join("note %03d: the quick brown fox jumps over the lazy dog\n" % i for i in range(1, 121)),
    "config.ini": "[main]\nname = demo\nlevel = 3\n\n[paths]\ndata = ./data\n",
}
MID = "python3 -c \"[print('row %05d ' % i + 'x' * 40) for i in range(1, 2001)]\""   # 2000 x 51 chars = 102,000 B

SCENARIOS = {
    "big-outputs": {"port": 18311, "steps": [
        [{"name": "Bash", "input": {"command": "seq 1 200000", "description": "big count"}}],
        [{"name": "Bash", "input": {"command": MID, "description": "mid-size rows"}}],
        [{"name": "Bash", "input": {"command": "echo hello; seq 1 5", "description": "small"}}],
        [{"name": "Read", "input": {"file_path": "{W}/notes.txt"}}],
        [{"name": "Read", "input": {"file_path": "{{SPILL}}", "offset": 1, "limit": 20}}],
        "All done: big outputs recorded."]},
    "parallel-and-errors": {"port": 18312, "steps": [
        {"text": "Running four things at once.", "calls": [
            {"name": "Bash", "input": {"command": "seq 1 3", "description": "tiny"}},
            {"name": "Bash", "input": {"command": "python3 -c \"print('abc ' * 50)\"", "description": "py print"}},
            {"name": "Read", "input": {"file_path": "{W}/config.ini"}},
            {"name": "Grep", "input": {"pattern": "note 01", "path": "{W}", "output_mode": "content"}}]},
        [{"name": "Bash", "input": {"command": "echo to-stderr >&2; echo partial; exit 3", "description": "fails"}},
         {"name": "Read", "input": {"file_path": "{W}/missing.txt"}}],
        "All done: parallel and errors recorded."]},
    "subagent": {"port": 18313, "steps": [
        [{"name": "Agent", "input": {"description": "count things", "subagent_type": "general-purpose",
                                      "prompt": "Run seq 1 30000 and then read notes.txt; report the last line.",
                                      "run_in_background": False}}],
        # the subagent's own requests carry tools too, so they consume the next steps
        [{"name": "Bash", "input": {"command": "seq 1 30000", "description": "sub big count"}}],
        [{"name": "Read", "input": {"file_path": "{W}/notes.txt"}}],
        "Subagent report: last line is 30000.",
        # back in the main loop
        [{"name": "Bash", "input": {"command": "echo after-agent", "description": "small"}}],
        "All done: subagent recorded."]},
}


def subst(obj, w):
    return json.loads(json.dumps(obj).replace("{W}", w))


def record(name):
    sc = SCENARIOS[name]
    base = os.path.join(ROOT, name)
    shutil.rmtree(base, ignore_errors=True)
    home, w = os.path.join(base, "home"), os.path.join(base, "w")
    os.makedirs(home), os.makedirs(w)
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
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % sc["port"], "ANTHROPIC_API_KEY": "sk-fake",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1", "IS_SANDBOX": "1", "TERM": "dumb", "LANG": "C.UTF-8"}
    try:
        p = subprocess.run([BIN, "-p", "go", "--dangerously-skip-permissions", "--tools", "Bash,Read,Grep,Glob,Write,Edit,Agent"],
                           cwd=w, env=env, capture_output=True, text=True, timeout=300)
        with open(os.path.join(base, "client.out"), "w") as f:
            f.write("rc=%d\n--stdout--\n%s\n--stderr--\n%s" % (p.returncode, p.stdout, p.stderr))
        print(name, "rc", p.returncode, p.stdout[-300:], p.stderr[-500:])
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()
    # copy session data only
    proj_root = os.path.join(home, ".claude", "projects")
    dst_home = os.path.join(out, "home")
    shutil.rmtree(dst_home, ignore_errors=True)
    files, sid = [], None
    for dp, dn, fns in os.walk(proj_root):
        for fn in sorted(fns):
            src = os.path.join(dp, fn)
            rel = os.path.relpath(src, home)
            dst = os.path.join(dst_home, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
            files.append("home/" + rel)
            if fn.endswith(".jsonl") and "subagents" not in rel:
                sid = fn[:-6]
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, env=env).stdout.split()[0]
    mpath = os.path.join(out, "meta.json")
    notes = json.load(open(mpath)).get("notes", "") if os.path.exists(mpath) else ""
    meta = {"client": "claude", "clientVersion": version, "sessionId": sid, "cwd": w, "home": home,
            "files": sorted(files), "notes": notes}
    with open(mpath, "w") as f:
        json.dump(meta, f, indent=1)
    shutil.copy(log, os.path.join(base, "fake.log.keep"))


if __name__ == "__main__":
    for n in sys.argv[1:] or list(SCENARIOS):
        record(n)
