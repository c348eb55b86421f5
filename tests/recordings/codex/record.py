#!/usr/bin/env python3
"""Re-record the Codex CLI test sessions against the scripted fake Responses API server.

Usage: python3 record.py [SCENARIO ...]      (default: all scenarios)
Env:   CODEX_BIN     codex binary (default: the musl binary of @openai/codex-linux-x64 under <repo>/.clients,
                     `npm install --prefix .clients @openai/codex@0.171.0`)
       FAKE_RESPONSES the scripted model server (default <repo>/tests/fakes/openai_responses.py)
       CREC_ROOT     scratch root (default /tmp/crec)

Each scenario runs with HOME=/tmp/crec/codex/<scenario>/home and CODEX_HOME=$HOME/.codex (config.toml with a
[model_providers.fake] entry, wire_api = "responses"), cwd /tmp/crec/codex/<scenario>/w, its own loopback port.
Only $CODEX_HOME/sessions/** is copied (byte-exact, modes kept) to <here>/<scenario>/home/.codex/sessions/.
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
                           fixed_rows, main, numbered_calls, prepare, run_client, scratch_root, walk_files, write_meta, write_received)

BIN = os.environ.get("CODEX_BIN", os.path.join(CLIENTS, "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"))
FAKE = os.environ.get("FAKE_RESPONSES", os.path.join(FAKES, "openai_responses.py"))
ROOT = scratch_root("codex")

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
    # The user raised tool_output_token_limit in $CODEX_HOME/config.toml (kept in the recording): the
    # 102,000-byte print is let through whole; the 1,288,895-byte count is still cut.
    "raised-limit": {"port": 18333, "config": "tool_output_token_limit = 50000\n", "steps": [
        [{"name": "exec_command", "args": {"cmd": MID, "max_output_tokens": 50000}}],
        [{"name": "exec_command", "args": {"cmd": "seq 1 200000", "max_output_tokens": 50000}}],
        "All done: raised limit recorded."]},
}

# `doctor whatif`: one session recorded under tool_output_token_limit at several values, in one scratch folder
# (same cwd and CODEX_HOME, call ids given by the script), so a replay of one recording under another's
# settings can be checked against what the model really received there. Outputs: 5,100 / 20,400 / 45,900 /
# 102,000 (twice) bytes of ASCII rows, 25,500 chars (47,000 bytes) of Cyrillic rows, and a small `cat`; some calls
# pass exec_command's own max_output_tokens (100,000), the others leave it to Codex's default.
MAX = {"max_output_tokens": 100000}
WHATIF_STEPS = [[{"name": "exec_command", "args": {"cmd": fixed_rows(rows), **extra}}]
                for rows, extra in ((100, {}), (400, {}), (900, MAX), (2000, MAX), (2000, {}))] + [
    [{"name": "exec_command", "args": {"cmd": fixed_rows(500, cyrillic=True), **MAX}}],
    [{"name": "exec_command", "args": {"cmd": "cat notes.txt"}}],
    "All done: what-if session recorded."]
WHATIF_LIMITS = {"whatif/default": None, "whatif/limit-1000": 1000, "whatif/limit-12000": 12000,
                 "whatif/limit-50000": 50000}
for number, (scenario, limit) in enumerate(WHATIF_LIMITS.items()):
    SCENARIOS[scenario] = {"port": 18360 + number, "steps": numbered_calls(WHATIF_STEPS, "call_", 24),
                           "scratch": "whatif",
                           **({"config": "tool_output_token_limit = %d\n" % limit} if limit else {})}
# The same with a model of Codex's built-in catalog (a tokens policy of 10,000) served by the scripted provider.
for number, (scenario, limit) in enumerate({"whatif/catalog-default": None, "whatif/catalog-limit-12000": 12000}.items()):
    SCENARIOS[scenario] = {**SCENARIOS["whatif/default"], "port": 18365 + number, "model": "gpt-5.5",
                           **({"config": "tool_output_token_limit = %d\n" % limit} if limit else {})}


def record(name):
    sc = SCENARIOS[name]
    base, home, w, out, spath = prepare(ROOT, HERE, name, sc["steps"], FILES, scratch=sc.get("scratch"))
    ch = os.path.join(home, ".codex")
    os.makedirs(ch)
    with open(os.path.join(ch, "config.toml"), "w") as f:
        config = CONFIG % sc["port"]
        if "model" in sc:
            config = config.replace('model = "fake-model"', 'model = "%s"' % sc["model"], 1)
        f.write(sc.get("config", "") + config)
    env = client_env(home, CODEX_HOME=ch, FAKE_API_KEY="sk-fake", OPENAI_API_KEY="sk-fake", RUST_LOG="error")
    with fake_server(FAKE, sc["port"], spath, os.path.join(base, "fake.log")):
        run_client(name, base, [BIN, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "go"],
                   w, env, stdin=subprocess.DEVNULL)
    kept = [os.path.join(ch, "config.toml")] if "config" in sc or "model" in sc else []  # what doctor must read too
    files = copy_session_files(kept + list(walk_files(os.path.join(ch, "sessions"))), home, out)
    sid = None
    for rel in files:
        fn = os.path.basename(rel)
        if fn.startswith("rollout-") and fn.endswith(".jsonl"):
            with open(os.path.join(home, rel[len("home/"):])) as f:
                first = json.loads(f.readline())
            sid = (first.get("payload") or {}).get("id") or sid
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, env=env).stdout.strip().split()[-1]
    write_meta(out, "codex", version, sid, w, home, files)
    write_received(os.path.join(base, "fake.log.bodies"), out)


if __name__ == "__main__":
    main(SCENARIOS, record)
