#!/usr/bin/env python3
"""Record real Qwen Code sessions against a scripted fake model, with Qwen's own
`/doctor memory --json` answer for each one.

Usage:
    python3 tests/recordings/qwen/record.py [SCENARIO ...]      # default: all

Environment:
    QWEN_CLI   path to the client's cli-entry.js
               (default /opt/qwen-ref/node_modules/@qwen-code/qwen-code/cli-entry.js)
    FAKE_LLM   the scripted model server (default <repo>/tests/fakes/openai_chat.py)
    NODE       node binary (default: "node" from PATH)
    QREC_ROOT  scratch root (default /tmp/qrec).  Keep it fixed: the recordings
               contain absolute paths under it (cwd, spill file paths).

For every scenario it wipes /tmp/qrec/<scenario>/, creates the work dir `w`
(and the input files the scenario needs), writes the fake model script and the
recording settings, starts fake_llm.py on a loopback port of its own, runs the
client with `-p` (several times with `--resume` for multi-turn scenarios), copies
the session file and the project temp dir (spill files) into
<this dir>/<scenario>/, then runs `--resume <id> -p "/doctor memory --json"`
under each doctor configuration and stores the parsed JSON.  Before every doctor
run the chats dir is restored to its pre-doctor state, so every expected*.json
answers exactly `session.jsonl` + `tmp/`.

The TUI scenarios (ui-history, rewind-compress) drive the interactive client in
tmux; they need `tmux` on PATH.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
QWEN_CLI = os.environ.get(
    "QWEN_CLI", os.path.join(REPO, ".reference/node_modules/@qwen-code/qwen-code/cli-entry.js"))
FAKE_LLM = os.environ.get("FAKE_LLM", os.path.join(REPO, "tests/fakes/openai_chat.py"))
NODE = os.environ.get("NODE", "node")
ROOT = os.environ.get("QREC_ROOT", "/tmp/qrec")
BASE_PORT = 18340

DEFAULT_SETTINGS = None  # no settings.json at all


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def sh(cmd, desc="x"):
    return {"name": "run_shell_command", "args": {"command": cmd, "description": desc}}


def tool(name, **args):
    return {"name": name, "args": args}


def write(path, data, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w", encoding=None if isinstance(data, bytes) else "utf-8") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)


def png_bytes(w=16, h=16):
    """A small deterministic RGB PNG (no PIL)."""
    raw = b"".join(b"\x00" + b"".join(bytes(((x * 16) & 255, (y * 16) & 255, ((x + y) * 8) & 255))
                                        for x in range(w)) for y in range(h))

    def chunk(t, d):
        c = struct.pack(">I", len(d)) + t + d
        return c + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def make_deep_tree(w, n=150):
    """n files whose absolute paths are ~600+ chars long (glob over them is big)."""
    d = os.path.join(w, "deep", "d" * 200, "e" * 200)
    for i in range(n):
        write(os.path.join(d, "file_%04d_%s.txt" % (i, "n" * 180)), "deep file %d\n" % i)
        # distinct, fixed mtimes so glob's "newest first" order is deterministic
        os.utime(os.path.join(d, "file_%04d_%s.txt" % (i, "n" * 180)), (1700000000 + i, 1700000000 + i))


def make_grep_tree(w, files=20, lines=200, width=100):
    """files x lines lines that all match 'needle' (grep caps at 1000 matches)."""
    for f in range(files):
        body = "".join("needle %02d-%04d %s\n" % (f, i, "g" * width) for i in range(lines))
        write(os.path.join(w, "grep", "g%02d.txt" % f), body)


def make_big_text(path, lines=3000, width=120):
    write(path, "".join(("line %05d " % i).ljust(width, "r") + "\n" for i in range(lines)))


# --------------------------------------------------------------------------
# scenarios
# --------------------------------------------------------------------------

def w_of(name):
    return os.path.join(ROOT, name, "w")


def sc_shell_truncation(name):
    return {
        "notes": "In-tool shell truncation: `seq 1 200000` (1.29 MB) is cut by the shell tool to its 30000 budget "
                 "with the 'Tool output was too large and has been truncated' header and a "
                 "run_shell_command_<hex>.output spill in tmp/; a small `echo hi` in the same batch.",
        "steps": [[sh("seq 1 200000", "big"), sh("echo hi", "small")], "All done."],
        "check": lambda s: need(s, ["Tool output was too large and has been truncated", "Output: hi"]),
    }


def setup_persist_gate(w):
    make_deep_tree(w)
    make_grep_tree(w)
    make_big_text(os.path.join(w, "big.txt"))


def sc_persist_gate(name):
    w = w_of(name)
    return {
        "extra_notes": "Observed with 0.24.4: only the glob result is gated (stub of ~1860 chars, 61 KB file in tool-results/). grep_search never reaches the 28000 gate with default settings: its in-tool cap (global threshold 25000 on the match text) keeps the text at ~25100 chars, so the scheduler cuts it to its 20000 budget instead ('Tool output was too large' header + grep_search_<hex>.output spill, ~20490 chars). read_file pages itself ('Showing lines 1-207 of 3001 total lines.', ~25060 chars).",
        "notes": "Persistence gate (28000): glob over 150 files with ~630-char paths (glob lists 100) -> "
                 "'<persisted-output>' stub + tmp/tool-results/<callId>.txt. grep_search over 4000 matching lines "
                 "(grep caps at 1000 matches / 25000 chars, then the scheduler's 20000 budget). read_file of a "
                 "3000-line 363 KB file (Infinity budget, gate-exempt; read_file pages itself).",
        "setup": setup_persist_gate,
        "steps": [[tool("glob", pattern="**/*.txt", path=w + "/deep"),
                   tool("grep_search", pattern="needle", path=w + "/grep"),
                   tool("read_file", file_path=w + "/big.txt")],
                  "All done."],
        "check": lambda s: need(s, ["<persisted-output>"]),
    }


def sc_batch_budget(name):
    sizes = [22000, 24000, 26000, 27000, 27000, 28000, 29000, 29500]
    return {
        "extra_notes": 'Observed: the two smallest (22145, 24145 chars) are kept, the other six become 25619, 25619, 25618 x4 chars (same as facts section e); six tool-results/<callId>.txt files hold the full texts.',
        "notes": "Batch budget (200000): eight parallel shell commands, each under the shell's own 30000 budget, "
                 "%s chars of payload; the batch total exceeds 200000 so the largest ones are rewritten to "
                 "'Tool output truncated. Persisted tool-output artifact: ...' with tmp/tool-results/<callId>.txt."
                 % sizes,
        "steps": [[sh("python3 -c \"print('b%d' + 'x' * %d)\"" % (i + 1, n), "b%d" % (i + 1))
                   for i, n in enumerate(sizes)], "All done."],
        "check": lambda s: need(s, ["Tool output truncated. Persisted tool-output artifact"]),
    }


def sc_errors(name):
    w = w_of(name)
    return {
        "extra_notes": 'Observed: the shell failure (exit 3) is recorded as response.error (not output). Unknown tool (40000-char name, 40155-char error) and invalid grep regex (41046-char error) are NOT persisted by the gate: these are pre-execution (registry/validation) errors, kept whole in response.error and resultDisplay is cut to 32000. The grep one is oversized (41046 > 2x20000+500); the unknown tool falls back to the threshold (50500) and is not. read_file of a missing file with a ~40000-char path IS persisted: response.error holds a <persisted-output> stub (~2480 chars) and tmp/tool-results/<callId>.txt the full message. glob with a missing dir reports the path error before looking at the 40000-char pattern (252 chars). tool_call/edit not used.',
        "notes": "Error results: failing shell command (exit 3, stderr), list_directory (disabled by default -> "
                 "tool_not_registered error), an unknown tool name, read_file of a missing file, and attempts at "
                 "very long error messages: an unknown tool whose name is 40000 chars, grep_search with an "
                 "invalid 40000-char regex, read_file of a missing file with a ~4000-char path and with a ~40000-char "
                 "path, glob in a missing dir with a 40000-char pattern.",
        "steps": [[sh("ls /nonexistent_qrec_dir; echo to-stderr 1>&2; exit 3", "fail"),
                   tool("list_directory", path=w),
                   tool("no_such_tool", foo="bar"),
                   tool("read_file", file_path=w + "/missing.txt")],
                  [tool("t" * 40000, foo="bar"),
                   tool("grep_search", pattern="(" + "a" * 40000, path=w),
                   tool("read_file", file_path=w + "/" + "/".join(["m" * 200] * 20) + "/x.txt")],
                  [tool("read_file", file_path=w + "/" + "/".join(["k" * 200] * 200) + "/x.txt"),
                   tool("glob", pattern="(" * 40000, path=w + "/nonexistent_" + "z" * 200)],
                  "All done."],
        "check": lambda s: need(s, ['"error"']),
    }


def setup_oversized(w):
    make_deep_tree(w)
    make_grep_tree(w)


def sc_oversized_alarm(name):
    w = w_of(name)
    return {
        "notes": "Recorded with truncation disabled (threshold -1, batch budget -1): shell prints 90000 chars raw, "
                 "glob returns 100 ~630-char paths raw (~64000), grep returns 1000 raw matches. expected.json: the "
                 "doctor run with DEFAULT settings (settings.json removed) -> these results are oversized against "
                 "shell 30000 / threshold 25000 / grep 20000. expected.recording-settings.json: doctor with the "
                 "recording settings -> oversizedThresholdChars 0; only budgets that stay finite (grep 20000) can flag.",
        "setup": setup_oversized,
        "settings": {"tools": {"truncateToolOutputThreshold": -1, "toolOutputBatchBudget": -1}},
        "steps": [[sh("python3 -c \"print('o' * 90000)\"", "big"),
                   tool("glob", pattern="**/*.txt", path=w + "/deep"),
                   tool("grep_search", pattern="needle", path=w + "/grep")],
                  "All done."],
        "doctor": [("expected.json", None, {}),
                   ("expected.recording-settings.json", "record", {})],
        # grep keeps its own finite 20000 budget even with the threshold disabled, so it is still cut by
        # the scheduler ("Tool output was too large"); shell and glob must stay raw.
        "check": lambda s: refuse(s, ["<persisted-output>", "Tool output truncated."]) + need(s, ["o" * 90000]),
    }


def setup_images(w):
    write(os.path.join(w, "img.png"), png_bytes())
    write(os.path.join(w, "small.txt"), "hello\n")


def sc_images(name):
    w = w_of(name)
    img = {"model": {"generationConfig": {"modalities": {"image": True}}}}
    img900 = {"model": {"generationConfig": {"modalities": {"image": True}},
                        "chatCompression": {"imageTokenEstimate": 900}}}
    return {
        "extra_notes": "Observed: the recorded functionResponse has response.output = 'Image overview: 16x16; oriented source: 16x16. ...' (184 chars) and parts[0].inlineData re-encoded as image/jpeg. 6648 = 184 + 1600*4 + 64; with QWEN_IMAGE_TOKEN_ESTIMATE=2.5: 184 + 10 + 64 = 258; with settings model.chatCompression.imageTokenEstimate=900: 184 + 3600 + 64 = 3848, so that settings key is honoured by 0.24.4.",
        "notes": "read_file of a 16x16 PNG with model.generationConfig.modalities.image=true -> functionResponse with "
                 "nested parts[].inlineData (estimated as imageTokenEstimate x 4 chars). expected.json: default 1600; "
                 "expected.estimate-2.5.json: env QWEN_IMAGE_TOKEN_ESTIMATE=2.5; expected.settings-900.json: "
                 "settings model.chatCompression.imageTokenEstimate=900.",
        "setup": setup_images,
        "settings": img,
        "steps": [[tool("read_file", file_path=w + "/img.png"), tool("read_file", file_path=w + "/small.txt")],
                  "All done."],
        "doctor": [("expected.json", "record", {}),
                   ("expected.estimate-2.5.json", "record", {"QWEN_IMAGE_TOKEN_ESTIMATE": "2.5"}),
                   ("expected.settings-900.json", img900, {})],
        "check": lambda s: need(s, ["inlineData"]),
    }


UNI_PY = r'''import sys
mode = sys.argv[1]
cjk = "汉字漢字かなカナ한글"
emo = "😀🎉🚀🐍💾"
if mode == "emoji-even":
    print(emo * 6000)                       # one line of 60000 UTF-16 units
elif mode == "emoji-odd":
    print("x" + emo * 6000 + "y")
elif mode.startswith("lines"):              # lines0 / lines1 / lines3: 500 lines of 40 emoji after k ASCII chars
    k = int(mode[5:])
    for i in range(500):
        print("x" * k + emo * 8)
elif mode == "mixed":
    for i in range(3000):
        print("%04d %s %s" % (i, cjk * 2, emo * (i % 3 + 1)))
'''


def setup_unicode(w):
    write(os.path.join(w, "u.py"), UNI_PY)
    page = "<html><head><meta charset='utf-8'><title>u</title></head><body>\n" + "".join(
        "<p>%04d 汉字漢字かなカナ한글 😀🎉🚀🐍💾 %s</p>\n" % (i, "中文内容" * 5) for i in range(1500)) + "</body></html>\n"
    write(os.path.join(w, "site", "page.html"), page)


def sc_unicode(name):
    port = name_port(name) + 100
    return {
        "extra_notes": "Observed: the single-line outputs (emoji-even/odd) keep only the 'Command:' line as head and the tail starts with '...' inside the emoji line; no lone surrogate there. The multi-line lines0/lines1/lines3 outputs DO contain lone surrogates (a high surrogate at the head cut and a low surrogate at the tail cut, written by Node as \\\\udXXX escapes in the jsonl). web_fetch of the local page (187579 bytes) was summarized through a no-tools side request that fake_llm answers with 'ok', so its result is a short 104-char text, not the raw page; no <persisted-output> for it.",
        "notes": "CJK + emoji (astral) shell outputs over the 30000 shell budget, truncated in-tool with plain "
                 "slice so a surrogate pair can be split (two single-line variants of opposite parity + a multi-line "
                 "mixed one); plus web_fetch of a local CJK/emoji page served by python3 -m http.server on 127.0.0.1.",
        "setup": setup_unicode,
        "http": port,
        "steps": [[sh("python3 u.py emoji-even", "e"), sh("python3 u.py emoji-odd", "o"), sh("python3 u.py mixed", "m"),
                   sh("python3 u.py lines0", "l0"), sh("python3 u.py lines1", "l1"), sh("python3 u.py lines3", "l3")],
                  [tool("web_fetch", url="http://127.0.0.1:%d/page.html" % port, prompt="Return the page text")],
                  "All done."],
        "check": lambda s: need(s, ["Tool output was too large"]) + ([] if LONE.search(s) else ["no lone surrogate"]),
    }


LONE = re.compile(r"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<![0-9a-f]{2})\\ud[c-f][0-9a-f]{2}", re.I)


def sc_orphaned(name):
    return {
        "extra_notes": 'Observed: both calls of the killed batch get a synthesized error of 141 chars (counted 205 each), so toolResultCount is 3.',
        "notes": "A normal batch, then a batch of a long-running shell call (python sleep 60) and a quick one; the "
                 "qwen process is SIGKILLed while the batch runs, so the recording has two functionCalls without "
                 "results. On resume Qwen synthesizes error responses (ORPHAN_TOOL_USE_REPAIR_REASON) that count.",
        "steps": [[sh("seq 1 5", "warm")],
                  [sh("python3 -c \"import time; time.sleep(60)\"", "long"), sh("seq 1 3", "quick")],
                  "never reached"],
        "kill_when": "time.sleep(60)",
        "check": lambda s: need(s, ["time.sleep(60)"]),
    }


def setup_multi(w):
    for i in range(5):
        write(os.path.join(w, "src", "m%d.py" % i), "".join("def f%d_%d():\n    return %d  # needle\n" % (i, j, j) for j in range(40)))
    make_big_text(os.path.join(w, "notes.txt"), lines=400, width=80)


def sc_multi_turn(name):
    w = w_of(name)
    return {
        "extra_notes": "Observed: `edit` fails ('has not been read in this session') because the file was written, not read, first; grep_search on a file path fails ('Path is not a directory'); both are error results. `ls -la` output contains timestamps (not byte-reproducible). The shell sometimes records 'Output: (empty)' for fast commands here; record.py retries until no shell result says so.",
        "notes": "Three user turns (-p, then --resume <id> -p twice) with 25+ results of shell, glob, grep_search, "
                 "read_file, write_file, edit; one in-tool shell truncation (seq 1 100000) in turn 1.",
        "setup": setup_multi,
        "turns": ["turn one", "turn two", "turn three"],
        "steps": [
            # turn 1
            [sh("seq 1 10", "a"), tool("glob", pattern="src/*.py"), tool("read_file", file_path=w + "/src/m0.py")],
            [tool("grep_search", pattern="needle", path=w + "/src"),
             tool("write_file", file_path=w + "/new.txt", content="alpha\nbeta\ngamma\n"),
             sh("seq 1 100000", "b")],
            "turn one done",
            # turn 2
            [tool("edit", file_path=w + "/new.txt", old_string="beta", new_string="BETA"),
             tool("read_file", file_path=w + "/new.txt"),
             sh("python3 -c \"print('p' * 5000)\"", "c"),
             tool("glob", pattern="**/*")],
            [sh("seq 1 2000", "d1"), sh("seq 2001 4000", "d2"), sh("python3 -c \"print('q' * 12000)\"", "d3"),
             sh("ls -la src", "d4")],
            "turn two done",
            # turn 3
            [tool("read_file", file_path=w + "/notes.txt"), tool("read_file", file_path=w + "/src/m1.py"),
             tool("read_file", file_path=w + "/src/m2.py", offset=10, limit=20)],
            [tool("grep_search", pattern="return 1", path=w + "/src"),
             tool("grep_search", pattern="line 003", path=w + "/notes.txt"),
             sh("wc -l notes.txt src/*.py", "e"), sh("seq 1 50000", "f")],
            "turn three done",
        ],
        "check": lambda s: (["fewer than 20 results"] if s.count('"type":"tool_result"') < 20 else []),
    }


def sc_ui_history(name):
    w = w_of(name)
    t10k = {"tools": {"truncateToolOutputThreshold": 10000}}
    return {
        "notes": "largeOutputsInUIHistory is only computed in the interactive TUI (ui.history is [] under -p). "
                 "Results whose recorded resultDisplay is large: shell `seq 1 200000` and a 45000-char single line "
                 "(shell_result .text compacted to ~32000), an unknown 40000-char tool name and an invalid "
                 "40000-char grep regex (error resultDisplay strings compacted to 32000). With default settings no "
                 "display can exceed 2x budget (shell 30000 / threshold 25000 / grep 20000), so the TUI answer is 0; "
                 "with tools.truncateToolOutputThreshold=10000 in effect for the doctor run (shell budget becomes "
                 "10000 too), the shell displays and the unknown-tool error display exceed 20000. "
                 "expected.json / expected.threshold-10000.json: -p answers; expected.tui.json / "
                 "expected.tui.threshold-10000.json: TUI answers (`--resume <id>` in tmux, typing "
                 "`/doctor memory --json`; only toolResultRetention is parsed from the pane, the wrapped "
                 "memory fields are not reliable there). The TUI appends slash_command records and a "
                 "<id>.runtime.json; it ran on a restored copy (session.jsonl is the pre-doctor file).",
        "steps": [[sh("seq 1 200000", "big"), sh("python3 -c \"print('u' * 45000)\"", "line"),
                   tool("t" * 40000, foo="bar"), tool("grep_search", pattern="(" + "a" * 40000, path=w)],
                  "All done."],
        "doctor": [("expected.json", None, {}),
                   ("expected.threshold-10000.json", t10k, {}),
                   ("expected.tui.json", None, {}, "tui"),
                   ("expected.tui.threshold-10000.json", t10k, {}, "tui")],
        "check": lambda s: need(s, ["Tool output was too large and has been truncated", "uuuuuuuuuuuuuuuuuu"]),
    }


def setup_compress(w):
    make_big_text(os.path.join(w, "notes.txt"), lines=300, width=80)


def sc_compress_fast(name):
    w = w_of(name)
    return {
        "notes": "A chat_compression record written by `/compress-fast` (rule-based compaction: microcompaction "
                 "force-clears old tool results keeping the recent 5, thoughts stripped; no model call), run "
                 "non-interactively with `--resume <id> -p /compress-fast --chat-recording` between two model "
                 "turns. Its systemPayload.compressedHistory holds the earlier results (old ones as "
                 "'[Old tool result content cleared]'); the history is replaced by it on resume, then the third "
                 "turn's results follow. (The LLM `/compress` cannot succeed against fake_llm.py: it always reports "
                 "usage prompt_tokens=10, so the compression is rejected as COMPRESSION_FAILED_INFLATED_TOKEN_COUNT, "
                 "'Compression was not beneficial for this history size.')",
        "setup": setup_compress,
        "turns": ["turn one", "/compress-fast", "turn three"],
        "steps": [
            [sh("seq 1 100000", "a"), sh("seq 1 30", "b"), tool("read_file", file_path=w + "/notes.txt"),
             tool("glob", pattern="*.txt")],
            [sh("python3 -c \"print('c' * 8000)\"", "c"), sh("seq 100 140", "d"),
             tool("grep_search", pattern="line 001", path=w)],
            [sh("python3 -c \"print('e' * 3000)\"", "e")],
            "turn one done",
            [sh("seq 1 7", "f"), tool("read_file", file_path=w + "/notes.txt", offset=0, limit=5)],
            "turn three done",
        ],
        "check": lambda s: need(s, ['"subtype":"chat_compression"', "Tool output was too large"]),
    }


def sc_rewind(name):
    return {
        "notes": "Rewind: turn one (seq 1 3), turn two (seq 1 100000, truncated in-tool, + a 6000-char print), then "
                 "the interactive TUI rewinds to before turn two (double Esc, newest turn, 'Restore conversation "
                 "only') -> a system/rewind record whose parentUuid is turn one's last record; then turn three "
                 "(seq 5 9 + 3000-char print) is appended by `--resume <id> -p`. Turn two's results are a dead "
                 "branch and must not be counted. expected.json: -p doctor; expected.tui.json: TUI doctor "
                 "(ui.history is built from the active chain); expected.tui.threshold-10000.json: TUI doctor with "
                 "threshold 10000 (shell budget 10000): the dead branch's seq display (~32000) would count if it "
                 "were (wrongly) included.",
        "turns": ["turn one", "turn two", tui_rewind_last_turn, "turn three"],
        "steps": [[sh("seq 1 3", "a")], "turn one done",
                  [sh("seq 1 100000", "b"), sh("python3 -c \"print('r' * 6000)\"", "b2")], "turn two done",
                  [sh("seq 5 9", "c"), sh("python3 -c \"print('s' * 3000)\"", "c2")], "turn three done"],
        "doctor": [("expected.json", None, {}), ("expected.tui.json", None, {}, "tui"),
                   ("expected.tui.threshold-10000.json", {"tools": {"truncateToolOutputThreshold": 10000}}, {}, "tui")],
        "check": lambda s: need(s, ['"subtype":"rewind"', "turn three done", "Tool output was too large"]),
    }


def capture_hook(name):
    """A PostToolUse hook that appends each payload Qwen hands it, one JSON line, to <scratch>/hook-payloads.jsonl
    and answers nothing (what `doctor hook qwen` is handed, for tests/integrations/test_alarm_qwen.py)."""
    target = os.path.join(ROOT, name, "hook-payloads.jsonl")
    command = ("python3 -c \"import sys; open(%r, 'ab').write(sys.stdin.buffer.read().rstrip(b'\\n') + b'\\n')\""
               % target)
    return {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 30}]}]}


def setup_hook_payloads(w):
    make_deep_tree(w)
    make_grep_tree(w, files=12, lines=100, width=20)
    make_big_text(os.path.join(w, "wide.txt"), lines=1000, width=210)


def sc_hook_payloads(name):
    w = w_of(name)
    return {
        "notes": "What the PostToolUse hook is handed, beside what the model got: truncation off "
                 "(truncateToolOutputThreshold -1; line cap and batch budget at their defaults), one tool per "
                 "batch, and a hook appending every payload to hook-payloads.jsonl (copied here). grep_search over "
                 "1,200 matching lines (grep lists 1,000) is handed raw to the hook and cut by the scheduler to its "
                 "20,000 budget after it; read_file of a 1,000-line 211,000-char file is cut by the 200,000 batch "
                 "budget after the hook ('Tool output truncated. Persisted tool-output artifact'); the shell's "
                 "90,000 chars and glob's 100 long paths stay whole; a small echo.",
        "setup": setup_hook_payloads,
        "settings": {"tools": {"truncateToolOutputThreshold": -1}, "hooks": capture_hook(name)},
        "steps": [[tool("grep_search", pattern="needle", path=w + "/grep")],
                  [tool("read_file", file_path=w + "/wide.txt")],
                  [sh("python3 -c \"print('o' * 90000)\"", "big")],
                  [tool("glob", pattern="**/*.txt", path=w + "/deep")],
                  [sh("echo small", "small")],
                  "All done."],
        "copy": ["hook-payloads.jsonl"],
        "check": lambda s: need(s, ["Tool output was too large", "Tool output truncated. Persisted tool-output artifact",
                                    "o" * 90000]),
    }


SCENARIOS = {
    "shell-truncation": sc_shell_truncation,
    "persist-gate": sc_persist_gate,
    "batch-budget": sc_batch_budget,
    "errors": sc_errors,
    "oversized-alarm": sc_oversized_alarm,
    "images": sc_images,
    "unicode": sc_unicode,
    "orphaned": sc_orphaned,
    "multi-turn": sc_multi_turn,
    "ui-history": sc_ui_history,
    "compress-fast": sc_compress_fast,
    "rewind": sc_rewind,
    "hook-payloads": sc_hook_payloads,
}


def name_port(name):
    order = list(SCENARIOS)
    return BASE_PORT + order.index(name)


def need(s, strings):
    return ["missing %r" % x for x in strings if x not in s]


def refuse(s, strings):
    return ["unexpected %r" % x for x in strings if x in s]


# --------------------------------------------------------------------------
# running the client
# --------------------------------------------------------------------------

def base_env(home, extra=None):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("QWEN") or k.startswith("OPENAI") or k.startswith("GEMINI")
                   or k.startswith("DASHSCOPE") or k.startswith("ANTHROPIC"))}
    env["HOME"] = home
    env.update(extra or {})
    return env


def cli_args(port):
    return [NODE, QWEN_CLI, "--auth-type", "openai", "--openai-base-url", "http://127.0.0.1:%d/v1" % port,
            "--openai-api-key", "sk-fake", "-m", "fake-model", "--yolo"]


def start_fake(port, script_path, log_path):
    p = subprocess.Popen([sys.executable, FAKE_LLM, str(port), script_path, log_path],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(50):
        try:
            import socket
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return p
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("fake_llm did not start on %d" % port)


def chats_dir(home, cwd):
    return os.path.join(home, ".qwen", "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd), "chats")


def find_session(home, cwd):
    d = chats_dir(home, cwd)
    ids = [f[:-6] for f in os.listdir(d) if f.endswith(".jsonl")] if os.path.isdir(d) else []
    if len(ids) != 1:
        raise RuntimeError("expected one session in %s, got %r" % (d, ids))
    return ids[0]


def descendants(pid):
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    st = f.read()
                ppid = int(st[st.rindex(")") + 2:].split()[1])
                kids.setdefault(ppid, []).append(int(p))
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        c = todo.pop()
        for k in kids.get(c, []):
            out.append(k)
            todo.append(k)
    return out


def run_turn(sc, home, w, port, prompt, session_id, log):
    args = cli_args(port) + ["--chat-recording"]
    if session_id:
        args += ["--resume", session_id]
    args += ["-p", prompt]
    env = base_env(home, sc.get("env"))
    if sc.get("kill_when"):
        p = subprocess.Popen(args, cwd=w, env=env, stdout=log, stderr=log, start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                sid = find_session(home, w)
                with open(os.path.join(chats_dir(home, w), sid + ".jsonl"), encoding="utf-8") as f:
                    if sc["kill_when"] in f.read():
                        break
            except (RuntimeError, OSError):
                pass
            time.sleep(0.2)
        time.sleep(3)  # let both calls start executing
        kids = descendants(p.pid)
        os.kill(p.pid, signal.SIGKILL)
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        p.wait()
        return
    r = subprocess.run(args, cwd=w, env=env, stdout=log, stderr=log, timeout=600)
    if r.returncode != 0:
        raise RuntimeError("client exited %d" % r.returncode)


def extract_json(text):
    i = text.find("{")
    while i >= 0:
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[i:])
            if isinstance(obj, dict) and "toolResultRetention" in obj:
                return obj
        except ValueError:
            pass
        i = text.find("{", i + 1)
    raise RuntimeError("no doctor JSON in output:\n" + text[-3000:])


def set_settings(home, settings):
    path = os.path.join(home, ".qwen", "settings.json")
    if settings is None:
        if os.path.exists(path):
            os.remove(path)
    else:
        write(path, json.dumps(settings, indent=2) + "\n")


def snapshot_dir(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst, copy_function=shutil.copy2)


def run_doctor(home, w, port, sid, env_extra, log):
    args = cli_args(port) + ["--resume", sid, "-p", "/doctor memory --json"]
    r = subprocess.run(args, cwd=w, env=base_env(home, env_extra), stdout=subprocess.PIPE,
                       stderr=log, timeout=300)
    return extract_json(r.stdout.decode("utf-8", "replace"))


def tmux(*a, check=True):
    return subprocess.run(["tmux"] + list(a), check=check, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE).stdout.decode("utf-8", "replace")


def pane(session):
    return tmux("capture-pane", "-t", session, "-p", "-J", "-S", "-10000")


def tui_start(name, home, w, port, sid, env_extra, base):
    env = base_env(home, env_extra)
    env["TERM"] = "xterm-256color"
    launcher = os.path.join(base, "tui.sh")
    keep = ["PATH", "HOME", "TERM", "LANG", "LC_ALL"] + list(env_extra)
    with open(launcher, "w") as f:
        f.write("#!/bin/sh\ncd %s || exit 1\nexec env -i %s %s\n" % (
            shq(w), " ".join("%s=%s" % (k, shq(env[k])) for k in keep if k in env),
            " ".join(shq(a) for a in cli_args(port) + ["--resume", sid])))
    os.chmod(launcher, 0o755)
    session = "qrec-%s-%d" % (name, os.getpid())
    tmux("new-session", "-d", "-s", session, "-x", "220", "-y", "50", launcher)
    return session


def wait_pane(session, needle, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = pane(session)
        if needle in text:
            return text
        time.sleep(0.5)
    raise RuntimeError("TUI never showed %r:\n%s" % (needle, pane(session)[-3000:]))


def tui_quit(session):
    tmux("send-keys", "-t", session, "C-u")
    tmux("send-keys", "-t", session, "-l", "/quit")
    time.sleep(0.5)
    tmux("send-keys", "-t", session, "Enter")
    time.sleep(3)


def tui_rewind_last_turn(name, home, w, port, sid, base):
    """Interactive rewind (double Esc opens the dialog; the newest turn is preselected; then
    'Restore conversation only').  Writes a system/rewind record that re-roots the chain."""
    session = tui_start(name, home, w, port, sid, {}, base)
    try:
        wait_pane(session, "Type your message")
        time.sleep(2)
        tmux("send-keys", "-t", session, "Escape")
        time.sleep(0.3)
        tmux("send-keys", "-t", session, "Escape")
        wait_pane(session, "Rewind Conversation (", 20)
        time.sleep(1)
        tmux("send-keys", "-t", session, "Enter")
        wait_pane(session, "Restore conversation only", 20)
        time.sleep(1)
        tmux("send-keys", "-t", session, "Enter")
        wait_pane(session, "Conversation rewound", 20)
        time.sleep(1)
        tui_quit(session)
    finally:
        tmux("kill-session", "-t", session, check=False)


def run_doctor_tui(name, home, w, port, sid, env_extra, base):
    """Resume the session in the interactive TUI (tmux), type `/doctor memory --json`, and parse the
    toolResultRetention object from the pane.  The TUI appends records to the session: the caller
    restores the chats dir afterwards."""
    session = tui_start(name, home, w, port, sid, env_extra, base)
    try:
        deadline = time.time() + 90
        while time.time() < deadline and "Type your message" not in pane(session):
            time.sleep(0.5)
        time.sleep(2)
        tmux("send-keys", "-t", session, "-l", "/doctor memory --json")
        time.sleep(1)
        tmux("send-keys", "-t", session, "Enter")
        deadline = time.time() + 90
        text = ""
        while time.time() < deadline:
            text = pane(session)
            if '"presentInCompressionInput"' in text:
                time.sleep(1)
                text = pane(session)
                break
            time.sleep(0.5)
        # the TUI draws a scrollbar / frame column at the right edge: strip it from every line
        clean = "\n".join(ln.rstrip().rstrip("\u2502\u2588\u2590\u258c\u2503\u2551\u2595 ").rstrip()
                          for ln in text.split("\n"))
        m = re.search(r'"toolResultRetention":\s*(\{[^{}]*\})', clean)
        if not m:
            raise RuntimeError("no toolResultRetention in TUI pane:\n" + text[-3000:])
        try:
            ans = {"toolResultRetention": json.loads(m.group(1))}
        except ValueError:
            raise RuntimeError("unparsable toolResultRetention in TUI pane: %r" % m.group(1))
        for key in ("sessionId", "qwenVersion"):
            mm = re.search(r'"%s":\s*"([^"]*)"' % key, clean)
            if mm:
                ans[key] = mm.group(1)
        ans["_source"] = "parsed from the TUI pane; only these fields are captured"
        tui_quit(session)
        return ans, text
    finally:
        tmux("kill-session", "-t", session, check=False)


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


def file_modes(d):
    out = {}
    for root, dirs, files in os.walk(d):
        for f in sorted(files):
            p = os.path.join(root, f)
            out[os.path.relpath(p, d)] = "%04o" % (os.stat(p).st_mode & 0o7777)
    return dict(sorted(out.items()))


def record(name, attempts=3):
    sc = SCENARIOS[name](name)
    for attempt in range(1, attempts + 1):
        problems = record_once(name, sc, attempt)
        if not problems:
            return True
        print("  [%s] attempt %d problems: %s" % (name, attempt, problems), flush=True)
    print("  [%s] giving up; stored the last attempt" % name, flush=True)
    return False


def record_once(name, sc, attempt):
    base = os.path.join(ROOT, name)
    if os.path.exists(base):
        shutil.rmtree(base)
    w, home = os.path.join(base, "w"), os.path.join(base, "home")
    os.makedirs(w)
    os.makedirs(home)
    if sc.get("setup"):
        sc["setup"](w)
    port = name_port(name)
    script_path = os.path.join(base, "script.json")
    write(script_path, json.dumps({"steps": sc["steps"]}, indent=1, ensure_ascii=False) + "\n")
    set_settings(home, sc.get("settings"))
    log = open(os.path.join(base, "client.log"), "ab")
    procs = [start_fake(port, script_path, os.path.join(base, "llm.log"))]
    if sc.get("http"):
        procs.append(subprocess.Popen([sys.executable, "-m", "http.server", str(sc["http"]), "--bind", "127.0.0.1",
                                       "--directory", os.path.join(w, "site")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(1)
    try:
        sid = None
        for prompt in sc.get("turns", ["go"]):
            if callable(prompt):
                prompt(name, home, w, port, sid, base)
                continue
            run_turn(sc, home, w, port, prompt, sid, log)
            sid = find_session(home, w)
        if sc.get("tui"):
            sc["tui"](sc, home, w, port, sid, log)
        out = os.path.join(HERE, name)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.makedirs(out)
        cdir = chats_dir(home, w)
        jsonl = os.path.join(cdir, sid + ".jsonl")
        phash = hashlib.sha256(w.encode()).hexdigest()
        tmpdir = os.path.join(home, ".qwen", "tmp", phash)
        shutil.copy2(jsonl, os.path.join(out, "session.jsonl"))
        if os.path.isdir(tmpdir):
            snapshot_dir(tmpdir, os.path.join(out, "tmp"))
        shutil.copy2(script_path, os.path.join(out, "script.json"))
        for extra in sc.get("copy", []):
            shutil.copy2(os.path.join(base, extra), os.path.join(out, extra))
        if sc.get("settings") is not None:
            write(os.path.join(out, "settings.json"), json.dumps(sc["settings"], indent=2) + "\n")
        pre_chats = os.path.join(base, "chats.pre-doctor")
        snapshot_dir(cdir, pre_chats)
        with open(jsonl, "rb") as f:
            pre = f.read()

        doctor_runs = sc.get("doctor") or [("expected.json", "record", {})]
        doctor_meta = {}
        after = None
        for run in doctor_runs:
            fname, settings, env_extra = run[:3]
            mode = run[3] if len(run) > 3 else "p"
            snapshot_dir(pre_chats, cdir)
            eff = sc.get("settings") if settings == "record" else settings
            set_settings(home, eff)
            if mode == "tui":
                ans, pane = run_doctor_tui(name, home, w, port, sid, env_extra, base)
                write(os.path.join(out, fname.replace(".json", ".pane.txt")), pane)
            else:
                ans = run_doctor(home, w, port, sid, env_extra, log)
            write(os.path.join(out, fname), json.dumps(ans, indent=2, ensure_ascii=False) + "\n")
            doctor_meta[fname] = {"settings": eff or {}, "env": env_extra,
                                  "mode": "interactive TUI (tmux)" if mode == "tui" else "-p"}
            if fname != "expected.json" and eff is not None and eff != sc.get("settings"):
                write(os.path.join(out, fname.replace("expected", "settings", 1)),
                      json.dumps(eff, indent=2) + "\n")
            with open(jsonl, "rb") as f:
                now = f.read()
            if after is None and now != pre and mode == "p":
                after = now
            print("  [%s] %s: %s" % (name, fname, json.dumps(ans["toolResultRetention"])), flush=True)
        if after is not None:
            write(os.path.join(out, "session.after-doctor.jsonl"), after)
        snapshot_dir(pre_chats, cdir)
        set_settings(home, sc.get("settings"))

        first = doctor_meta.get("expected.json", next(iter(doctor_meta.values())))
        extra_files = sorted(f for f in os.listdir(cdir) if f != sid + ".jsonl")
        meta = {
            "sessionId": sid,
            "cwd": w,
            "home": home,
            "qwenHome": os.path.join(home, ".qwen"),
            "projectHash": phash,
            "env": {"HOME": home},
            "recordingSettings": sc.get("settings") or {},
            "doctorSettings": first["settings"],
            "doctorRuns": doctor_meta,
            # modes of the pre-doctor copy (copy2 keeps them); the TUI later adds tmp/<hash>/logs.json
            "tmpFileModes": file_modes(os.path.join(out, "tmp")) if os.path.isdir(os.path.join(out, "tmp")) else {},
            "qwenCli": QWEN_CLI,
            "qwenVersion": json.load(open(os.path.join(out, doctor_runs[0][0]))).get("qwenVersion"),
            "recordedAttempt": attempt,
            "otherChatsFiles": extra_files,
            "notes": sc["notes"],
        }
        if sc.get("extra_notes"):
            meta["notes"] += " " + sc["extra_notes"]
        write(os.path.join(out, "meta.json"), json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        text = pre.decode("utf-8", "surrogatepass")
        problems = sc["check"](text) if sc.get("check") else []
        if "Output: (empty)" in text and not sc.get("allow_empty"):
            problems.append("shell recorded 'Output: (empty)'")
        return problems
    finally:
        for p in procs:
            p.terminate()
            p.wait()
        log.close()


def main():
    names = sys.argv[1:] or list(SCENARIOS)
    ok = True
    for n in names:
        print("== %s" % n, flush=True)
        ok = record(n) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
