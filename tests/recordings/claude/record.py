#!/usr/bin/env python3
"""Re-record the Claude Code test sessions against the scripted fake Anthropic server.

Usage: python3 record.py [SCENARIO ...]      (default: all scenarios)
Env:   CLAUDE_BIN   native claude binary (default: the npm platform package under <repo>/.clients,
                    `npm install --prefix .clients @anthropic-ai/claude-code@2.1.332`)
       FAKE_ANTHROPIC  the scripted model server (default <repo>/tests/fakes/anthropic.py)
       CREC_ROOT    scratch root (default /tmp/crec)

Each scenario runs in a throwaway HOME=/tmp/crec/claude/<scenario>/home (CLAUDE_CONFIG_DIR=$HOME/.claude),
cwd /tmp/crec/claude/<scenario>/w, on its own loopback port.  Only the session data under
$HOME/.claude/projects/ is copied (byte-exact, modes kept) to <here>/<scenario>/home/.claude/projects/.
script.json is written next to it, and meta.json (notes kept from an existing meta.json).
After re-recording, regenerate the expected figures with the independent snippet:
    python3 <scenario>/expected.method.txt <scenario> > <scenario>/expected.json
(the limit scenarios, which have no expected.method.txt: python3 ../limit_figures.py <scenario> > <scenario>/expected.json;
their received.json, what the model server was sent, is written by the recording itself)
and review meta.json notes (they quote ids, spill names and sizes of the committed recording).
"""
import json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from recording_kit import (CLIENTS, FAKES, FILES, MID, client_env, copy_session_files, fake_server,  # noqa: E402
                           fixed_rows, main, numbered_calls, prepare, run_client, scratch_root, walk_files, write_meta, write_received)

BIN = os.environ.get("CLAUDE_BIN", os.path.join(CLIENTS, "@anthropic-ai/claude-code-linux-x64/claude"))
FAKE = os.environ.get("FAKE_ANTHROPIC", os.path.join(FAKES, "anthropic.py"))
ROOT = scratch_root("claude")
MCP_SERVER = os.path.join(HERE, "mcp_big.py")  # run with this interpreter (needs the repo's `mcp` extra)
MCP_TOOL = "mcp__big__big_text"  # Claude's name for the server's one tool
# 2,500 lines x 60 chars = 150,000 chars (~37,500 tokens at 4 chars a token: over Read's 25,000-token default,
# under its 262,144-byte cap); huge.txt is 5,000 such lines = 300,000 bytes (over the byte cap).
BIG_FILES = {"big.txt": "".join("read row %05d " % i + "r" * 45 + "\n" for i in range(1, 2501)),
             "huge.txt": "".join("huge row %05d " % i + "h" * 45 + "\n" for i in range(1, 5001))}
# The user raised every limit the session hits: Bash's setting, and the two token limits through the `env`
# block of ~/.claude/settings.json (Claude copies it into its environment at start).
RAISED = {"bashOutputMaxChars": 128000,
          "env": {"MAX_MCP_OUTPUT_TOKENS": "60000", "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS": "60000"}}

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
    # Errors and a manual /compact: the session is resumed twice, with "/compact" and then a prompt whose
    # tool call lands after the compact boundary.
    "compact": {"port": 18314, "resume": ["/compact", "go on"], "steps": [
        {"text": "Three things at once, two of them fail.", "calls": [
            {"name": "Bash", "input": {"command": "seq 1 20", "description": "small count"}},
            {"name": "Read", "input": {"file_path": "{W}/missing.txt"}},
            {"name": "Bash", "input": {"command": "echo broken >&2; exit 2", "description": "fails"}}]},
        [{"name": "Read", "input": {"file_path": "{W}/notes.txt"}}],
        "All done before the compaction.",
        # /compact sends two requests that offer tools (2.1.332): text steps suit both
        "Summary: the user ran seq 1 20, two failing calls and read notes.txt.",
        "Summary: the user ran seq 1 20, two failing calls and read notes.txt.",
        [{"name": "Bash", "input": {"command": "echo after-compact; seq 1 3", "description": "after compact"}}],
        "Finished after the compaction."]},
    # Claude's own limits acting on a large MCP result and two large Reads (defaults: no settings file).
    "limits": {"port": 18315, "mcp": True, "files": BIG_FILES, "steps": [
        [{"name": MCP_TOOL, "input": {"lines": 2500}}],
        [{"name": "Read", "input": {"file_path": "{W}/big.txt"}}],
        [{"name": "Read", "input": {"file_path": "{W}/huge.txt"}}],
        [{"name": "Bash", "input": {"command": MID, "description": "mid-size rows"}}],
        "All done: Claude's limits recorded."]},
    # The same calls with the limits raised in ~/.claude/settings.json (kept in the recording).
    "raised-limits": {"port": 18316, "mcp": True, "files": BIG_FILES, "settings": RAISED, "steps": [
        [{"name": MCP_TOOL, "input": {"lines": 2500}}],
        [{"name": "Read", "input": {"file_path": "{W}/big.txt"}}],
        [{"name": "Bash", "input": {"command": MID, "description": "mid-size rows"}}],
        "All done: raised limits recorded."]},
}

# `doctor whatif`: one session recorded under Claude's Bash limits at several values, in one scratch folder
# (same cwd and HOME, call ids given by the script), so a replay of one recording under another's
# settings can be checked against what the model really received there. Outputs: 5,100 / 20,400 / 45,900 /
# 102,000 / 153,000 bytes of ASCII rows, 25,500 chars (47,000 bytes) of Cyrillic rows, and a small Read.
WHATIF_STEPS = [[{"name": "Bash", "input": {"command": fixed_rows(rows), "description": "fixed rows"}}]
                for rows in (100, 400, 900, 2000, 3000)] + [
    [{"name": "Bash", "input": {"command": fixed_rows(500, cyrillic=True), "description": "fixed Cyrillic rows"}}],
    [{"name": "Read", "input": {"file_path": "{W}/notes.txt"}}],
    "All done: what-if session recorded."]
WHATIF_SETTINGS = {"whatif/default": None,
                   "whatif/bash-10000": {"bashOutputMaxChars": 10000},
                   "whatif/bash-50000": {"bashOutputMaxChars": 50000},
                   "whatif/bash-128000": {"bashOutputMaxChars": 128000},
                   "whatif/read-back-100000": {"env": {"BASH_MAX_OUTPUT_LENGTH": "100000"}}}
for number, (scenario, settings) in enumerate(WHATIF_SETTINGS.items()):
    SCENARIOS[scenario] = {"port": 18340 + number, "steps": numbered_calls(WHATIF_STEPS, "toolu_", 24),
                           "scratch": "whatif",
                           **({"settings": settings} if settings else {})}

# The general persistence layer on multi-byte output: 700 Cyrillic rows (35,700 chars, 65,800 bytes) under the
# defaults (Bash's byte gate saves it) and with BASH_MAX_OUTPUT_LENGTH 100,000 (the bytes pass, the chars do not:
# the general layer saves it and names its size in chars).
CYRILLIC_STEPS = [[{"name": "Bash", "input": {"command": fixed_rows(700, cyrillic=True), "description": "rows"}}],
                  "All done: Cyrillic rows recorded."]
for number, (scenario, settings) in enumerate({"whatif-cyrillic/default": None, "whatif-cyrillic/read-back-100000":
                                               {"env": {"BASH_MAX_OUTPUT_LENGTH": "100000"}}}.items()):
    SCENARIOS[scenario] = {"port": 18346 + number, "steps": numbered_calls(CYRILLIC_STEPS, "toolu_", 24),
                           "scratch": "whatif-cyrillic", **({"settings": settings} if settings else {})}


def main_session_id(home):
    """The id of the one main session under $HOME/.claude/projects/ (subagent files aside)."""
    files = [f for f in walk_files(os.path.join(home, ".claude", "projects")) if f.endswith(".jsonl") and "subagents" not in f]
    return os.path.basename(files[0])[:-6]


def record(name):
    sc = SCENARIOS[name]
    base, home, w, out, spath = prepare(ROOT, HERE, name, sc["steps"], {**FILES, **sc.get("files", {})},
                                        scratch=sc.get("scratch"))
    log = os.path.join(base, "fake.log")
    kept = []
    if "settings" in sc:
        settings = os.path.join(home, ".claude", "settings.json")
        os.makedirs(os.path.dirname(settings))
        with open(settings, "w") as f:
            json.dump(sc["settings"], f, indent=1)
        kept.append(settings)
    env = client_env(home, CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
                     ANTHROPIC_BASE_URL="http://127.0.0.1:%d" % sc["port"], ANTHROPIC_API_KEY="sk-fake",
                     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
                     DISABLE_ERROR_REPORTING="1", IS_SANDBOX="1")
    with fake_server(FAKE, sc["port"], spath, log):
        flags = ["--dangerously-skip-permissions", "--tools", "Bash,Read,Grep,Glob,Write,Edit,Agent"]
        if sc.get("mcp"):
            config = {"mcpServers": {"big": {"command": sys.executable, "args": [MCP_SERVER]}}}
            flags += ["--strict-mcp-config", "--mcp-config", json.dumps(config)]
        run_client(name, base, [BIN, "-p", "go", *flags], w, env, stderr_tail=500)
        for prompt in sc.get("resume", []):
            run_client(name, base, [BIN, "--resume", main_session_id(home), "-p", prompt, *flags], w, env, stderr_tail=500)
    # copy session data only
    files = copy_session_files(kept + list(walk_files(os.path.join(home, ".claude", "projects"))), home, out)
    sid = None
    for rel in files:
        fn = os.path.basename(rel)
        if fn.endswith(".jsonl") and "subagents" not in rel:
            sid = fn[:-6]
    version = subprocess.run([BIN, "--version"], capture_output=True, text=True, env=env).stdout.split()[0]
    write_meta(out, "claude", version, sid, w, home, files)
    shutil.copy(log, os.path.join(base, "fake.log.keep"))
    write_received(log + ".bodies", out)


if __name__ == "__main__":
    main(SCENARIOS, record)
