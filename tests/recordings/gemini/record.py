#!/usr/bin/env python3
"""Re-record the Gemini CLI test sessions against the scripted fake Gemini API server.

Usage: python3 record.py [SCENARIO ...]      (default: all scenarios)
Env:   GEMINI_JS    the CLI entry, run with `node` (default <repo>/.clients/node_modules/@google/gemini-cli/bundle/gemini.js,
                    `npm install --prefix .clients @google/gemini-cli@0.61.0`)
       FAKE_GEMINI  the scripted model server (default <repo>/tests/fakes/gemini.py)
       CREC_ROOT    scratch root (default /tmp/crec)

Each scenario runs with a throwaway HOME=/tmp/crec/gemini/<scenario>/home, cwd /tmp/crec/gemini/<scenario>/w, its own
loopback port.  Only session data is copied (byte-exact, modes kept) to <here>/<scenario>/home/.gemini/...:
tmp/<project>/chats/**, tmp/<project>/tool-outputs/**, and projects.json (the slug registry).
After re-recording, regenerate the expected figures with the independent snippet:
    python3 <scenario>/expected.method.txt <scenario> > <scenario>/expected.json
(the limit scenarios, which have no expected.method.txt: python3 ../limit_figures.py <scenario> > <scenario>/expected.json;
their received.json, what the model server was sent, is written by the recording itself)
and review meta.json notes (they quote ids, spill names and sizes of the committed recording).
"""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from recording_kit import (CLIENTS, FAKES, FILES, MID, client_env, copy_session_files, fake_server,  # noqa: E402
                           fixed_rows, main, numbered_calls, prepare, run_client, scratch_root, write_meta, write_received)

JS = os.environ.get("GEMINI_JS", os.path.join(CLIENTS, "@google/gemini-cli/bundle/gemini.js"))
FAKE = os.environ.get("FAKE_GEMINI", os.path.join(FAKES, "gemini.py"))
ROOT = scratch_root("gemini")

# 3001 lines x 74 chars = 222,074 B: read_file cuts it at 2000 lines, and tool output masking may kick in
FILES = {**FILES, "big.txt": "".join("big %05d " % i + "y" * 63 + "\n" for i in range(1, 3002))}

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
    # The user raised tools.truncateToolOutputThreshold in ~/.gemini/settings.json (kept in the recording):
    # a 102,000-char shell output is let through whole; a 588,895-char one is still cut at the new threshold.
    "raised-limit": {"port": 18323, "settings": {"tools": {"truncateToolOutputThreshold": 200000}}, "steps": [
        [{"name": "run_shell_command", "args": {"command": MID, "description": "mid-size rows"}}],
        [{"name": "run_shell_command", "args": {"command": "seq 1 100000", "description": "big count"}}],
        "All done: raised limit recorded."]},
}

# `doctor whatif`: one session recorded under tools.truncateToolOutputThreshold at several values, in one scratch
# folder (same cwd and HOME, call ids given by the script), so a replay of one recording under another's
# settings can be checked against what the model really received there. Outputs: 5,100 / 20,400 / 45,900 /
# 102,000 chars of ASCII rows, 25,500 chars of Cyrillic rows, a small read_file, and last 163,200 chars of rows (cut
# under every threshold, and never masked: no request follows it); the rest together stays under output masking's
# thresholds, so only the truncation threshold differs between the recordings.
WHATIF_STEPS = [[{"name": "run_shell_command", "args": {"command": fixed_rows(rows), "description": "fixed rows"}}]
                for rows in (100, 400, 900, 2000)] + [
    [{"name": "run_shell_command", "args": {"command": fixed_rows(500, cyrillic=True),
                                            "description": "fixed Cyrillic rows"}}],
    [{"name": "read_file", "args": {"file_path": "{W}/notes.txt"}}],
    # over every threshold recorded: each recording names its tool-outputs folder at least once
    [{"name": "run_shell_command", "args": {"command": fixed_rows(3200), "description": "fixed rows"}}],
    "All done: what-if session recorded."]
WHATIF_SETTINGS = {"whatif/default": None, "whatif/threshold-10000": 10000, "whatif/threshold-60000": 60000,
                   "whatif/threshold-150000": 150000}
for number, (scenario, threshold) in enumerate(WHATIF_SETTINGS.items()):
    SCENARIOS[scenario] = {"port": 18350 + number, "steps": numbered_calls(WHATIF_STEPS, "call_", 6),
                           "scratch": "whatif",
                           **({"settings": {"tools": {"truncateToolOutputThreshold": threshold}}} if threshold else {})}


def record(name):
    sc = SCENARIOS[name]
    base, home, w, out, spath = prepare(ROOT, HERE, name, sc["steps"], FILES, scratch=sc.get("scratch"))
    g = os.path.join(home, ".gemini")
    os.makedirs(g)
    with open(os.path.join(g, "settings.json"), "w") as f:
        json.dump({**SETTINGS, **sc.get("settings", {})}, f, indent=1)
    env = client_env(home, GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % sc["port"], GEMINI_API_KEY="fake",
                     GEMINI_CLI_TRUST_WORKSPACE="true", NO_BROWSER="1", CI="")
    with fake_server(FAKE, sc["port"], spath, os.path.join(base, "fake.log")):
        run_client(name, base, ["node", JS, "-p", "go", "--yolo"], w, env)
    keep = [os.path.join(g, "settings.json")] if "settings" in sc else []  # what doctor must read too
    if os.path.exists(os.path.join(g, "projects.json")):
        keep.append(os.path.join(g, "projects.json"))
    for dp, dn, fns in os.walk(os.path.join(g, "tmp")):
        rel = os.path.relpath(dp, os.path.join(g, "tmp")).split(os.sep)
        if len(rel) >= 2 and rel[1] in ("chats", "tool-outputs"):
            keep += [os.path.join(dp, fn) for fn in sorted(fns)]
    files = copy_session_files(keep, home, out)
    sid = None
    for src in keep:
        if "/chats/" in src and src.endswith(".jsonl"):
            with open(src) as f:
                sid = json.loads(f.readline()).get("sessionId")
    version = subprocess.run(["node", JS, "--version"], capture_output=True, text=True, env=env).stdout.strip()
    write_meta(out, "gemini", version, sid, w, home, files)
    write_received(os.path.join(base, "fake.log.bodies"), out)


if __name__ == "__main__":
    main(SCENARIOS, record)
