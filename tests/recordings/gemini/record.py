#!/usr/bin/env python3
"""Re-record the Gemini CLI test sessions against the scripted fake Gemini API server.

Usage: python3 record.py [SCENARIO ...]      (default: all scenarios)
Env:   GEMINI_JS    the CLI entry (default /opt/clients/node_modules/@google/gemini-cli/bundle/gemini.js), run with `node`
       FAKE_GEMINI  path of fake_gemini.py (default /work/shared/tools/fake_gemini.py)
       CREC_ROOT    scratch root (default /tmp/crec)

Each scenario runs with a throwaway HOME=/tmp/crec/gemini/<scenario>/home, cwd /tmp/crec/gemini/<scenario>/w, its own
loopback port.  Only session data is copied (byte-exact, modes kept) to <here>/<scenario>/home/.gemini/...:
tmp/<project>/chats/**, tmp/<project>/tool-outputs/**, and projects.json (the slug registry).
After re-recording, regenerate the expected figures with the independent snippet:
    python3 <scenario>/expected.method.txt <scenario> > <scenario>/expected.json
and review meta.json notes (they quote ids, spill names and sizes of the committed recording).
"""
import json, os, shutil, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
JS = os.environ.get("GEMINI_JS", "/opt/clients/node_modules/@google/gemini-cli/bundle/gemini.js")
FAKE = os.environ.get("FAKE_GEMINI", "/work/shared/tools/fake_gemini.py")
ROOT = os.path.join(os.environ.get("CREC_ROOT", "/tmp/crec"), "gemini")

FILES = {
    "notes.txt": "".join("note %03d: the quick brown fox jumps over the lazy dog\n" % i for i in range(1, 121)),
    "config.ini": "[main]\nname = demo\nlevel = 3\n\n[paths]\ndata = ./data\n",
    # 3001 lines x 74 chars = 222,074 B: read_file cuts it at 2000 lines, and tool output masking may kick in
    "big.txt": "".join("big %05d " % i + "y" * 63 + "\n" for i in range(1, 3002)),
}
MID = "python3 -c \"[print('row %05d ' % i + 'x' * 40) for i in range(1, 2001)]\""   # 2000 x 51 chars = 102,000 B
SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False,
                        "enableAutoUpdateNotification": False},
            "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False}}

SCENARIOS = {
    "big-outputs": {"port": 18321, "steps": [
        [{"name": "run_shell_command", "args": {"command": "seq 1 100000", "description": "big count"}}],
        [{"name": "run_shell_command", "args": {"command": MID, "description": "mid-size rows"}}],
        [{"name": "run_shell_command", "args": {"command": "echo hello; seq 1 5", "description": "small"}}],
        [{"name": "read_file", "args": {"file_path": "{W}/notes.txt"}}],
        [{"name": "read_file", "args": {"file_path": "{{SPILL}}", "start_line": 1, "end_line": 20}}],
        # two ~150K-char reads: >50K tokens newer than the first one -> tool output masking of everything older
        [{"name": "read_file", "args": {"file_path": "{W}/big.txt"}}],
        [{"name": "read_file", "args": {"file_path": "{W}/big.txt", "start_line": 1001, "end_line": 3001}}],
        [{"name": "run_shell_command", "args": {"command": "echo after-big-read", "description": "small"}}],
        "All done: big outputs recorded."]},
    "parallel-and-errors": {"port": 18322, "steps": [
        [{"name": "run_shell_command", "args": {"command": "seq 1 3", "description": "tiny"}},
         {"name": "run_shell_command", "args": {"command": "python3 -c \"print('abc ' * 50)\"", "description": "py print"}},
         {"name": "read_file", "args": {"file_path": "{W}/config.ini"}},
         {"name": "grep_search", "args": {"pattern": "note 01", "dir_path": "{W}"}}],
        [{"name": "run_shell_command", "args": {"command": "echo to-stderr >&2; echo partial; exit 3", "description": "fails"}},
         {"name": "read_file", "args": {"file_path": "{W}/missing.txt"}}],
        "All done: parallel and errors recorded."]},
}


def subst(obj, w):
    return json.loads(json.dumps(obj).replace("{W}", w))


def record(name):
    sc = SCENARIOS[name]
    base = os.path.join(ROOT, name)
    shutil.rmtree(base, ignore_errors=True)
    home, w = os.path.join(base, "home"), os.path.join(base, "w")
    os.makedirs(os.path.join(home, ".gemini")), os.makedirs(w)
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump(SETTINGS, f, indent=1)
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
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TERM": "dumb", "LANG": "C.UTF-8",
           "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % sc["port"], "GEMINI_API_KEY": "fake",
           "GEMINI_CLI_TRUST_WORKSPACE": "true", "NO_BROWSER": "1", "CI": ""}
    try:
        p = subprocess.run(["node", JS, "-p", "go", "--yolo"], cwd=w, env=env, capture_output=True, text=True, timeout=300)
        with open(os.path.join(base, "client.out"), "w") as f:
            f.write("rc=%d\n--stdout--\n%s\n--stderr--\n%s" % (p.returncode, p.stdout, p.stderr))
        print(name, "rc", p.returncode, p.stdout[-300:], p.stderr[-800:])
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()
    g = os.path.join(home, ".gemini")
    dst_home = os.path.join(out, "home")
    shutil.rmtree(dst_home, ignore_errors=True)
    files, sid = [], None
    keep = []
    if os.path.exists(os.path.join(g, "projects.json")):
        keep.append(os.path.join(g, "projects.json"))
    for dp, dn, fns in os.walk(os.path.join(g, "tmp")):
        rel = os.path.relpath(dp, os.path.join(g, "tmp")).split(os.sep)
        if len(rel) >= 2 and rel[1] in ("chats", "tool-outputs"):
            keep += [os.path.join(dp, fn) for fn in sorted(fns)]
    for src in keep:
        rel = os.path.relpath(src, home)
        dst = os.path.join(dst_home, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
        files.append("home/" + rel)
        if "/chats/" in src and src.endswith(".jsonl"):
            with open(src) as f:
                sid = json.loads(f.readline()).get("sessionId")
    version = subprocess.run(["node", JS, "--version"], capture_output=True, text=True, env=env).stdout.strip()
    mpath = os.path.join(out, "meta.json")
    notes = json.load(open(mpath)).get("notes", "") if os.path.exists(mpath) else ""
    meta = {"client": "gemini", "clientVersion": version, "sessionId": sid, "cwd": w, "home": home,
            "files": sorted(files), "notes": notes}
    with open(mpath, "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    for n in sys.argv[1:] or list(SCENARIOS):
        record(n)
