"""`doctor spill` driven through the CLI entry point (and once as `python -m doctor`)."""

import json
import re
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.cli import main
from tests.spill.recording_copies import qwen_copy

REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO / "tests/recordings/qwen/persist-gate"
GATE_FILE = next(RECORDING.glob("tmp/tool-results/call_*.txt")).relative_to(RECORDING)


@pytest.fixture
def gate(tmp_path):
    """A copy with Qwen's 0600 modes, its recorded paths pointing nowhere on this machine."""
    return qwen_copy("persist-gate", tmp_path)


def test_verify_clean_then_tampered(gate, capsys):
    assert main(["spill", "verify", str(gate / "session.jsonl")]) == 0
    assert "2 pointers, 2 resolved (2 remapped)" in capsys.readouterr().out
    with open(gate / GATE_FILE, "ab") as handle:
        handle.write(b"!")
    assert main(["spill", "verify", str(gate / "session.jsonl"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["summary"] == {"digest-mismatch": 1} and report["ok"] is False


def test_verify_finds_files_under_an_explicit_spill_root(gate, tmp_path, capsys):
    elsewhere = tmp_path / "support-bundle"
    shutil.move(gate / "tmp", elsewhere)
    assert main(["spill", "verify", str(gate / "session.jsonl")]) == 1
    assert main(["spill", "verify", str(gate / "session.jsonl"), "--spill-root", str(elsewhere)]) == 0


def test_memory_audit_finds_files_under_an_explicit_spill_root(gate, tmp_path, capsys):
    elsewhere = tmp_path / "support-bundle"
    shutil.move(gate / "tmp", elsewhere)
    check = ["memory", str(gate / "session.jsonl"), "--json", "--check", "--fail-on", "missing"]
    assert main(check) == 1
    capsys.readouterr()
    assert main([*check, "--spill-root", str(elsewhere)]) == 0
    assert json.loads(capsys.readouterr().out)["spill"]["totals"]["resolved"] == 2


def test_verify_bad_input_is_one_line_naming_the_file(tmp_path, capsys):
    assert main(["spill", "verify", str(tmp_path / "absent.jsonl")]) == 2
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    assert main(["spill", "verify", str(junk)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "absent.jsonl" in err[0] and "notes.txt" in err[1]


def test_verify_as_a_subprocess(gate):
    def run(*args):
        env = dict(os.environ, PYTHONPATH=str(REPO))
        return subprocess.run([sys.executable, "-m", "doctor", "spill", "verify", *args],
                              capture_output=True, text=True, env=env, cwd=REPO).returncode

    assert run(str(gate / "session.jsonl")) == 0
    (gate / GATE_FILE).chmod(0o644)
    assert run(str(gate / "session.jsonl")) == 1
    assert run(str(gate / "missing.jsonl")) == 2


def test_list_json(gate, capsys):
    assert main(["spill", "list", str(gate / "session.jsonl"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["pointers"]
    assert [row["kind"] for row in rows] == ["qwen-persisted", "qwen-truncation"]
    assert all(row["resolution"]["remapped"] for row in rows)


def test_show_pages_by_zero_based_offset(gate, capsys):
    path = gate / GATE_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    assert main(["spill", "show", str(path), "--offset", "2", "--limit", "3", "--spill-root", str(gate / "tmp")]) == 0
    assert capsys.readouterr().out.splitlines() == lines[2:5]


def test_show_grep_prints_numbered_matches(gate, capsys):
    path = next(gate.glob("tmp/grep_search_*.output"))
    assert main(["spill", "show", str(path), "--grep", r"needle 09-0001 ", "--spill-root", str(gate / "tmp")]) == 0
    assert capsys.readouterr().out.startswith("5: L2: needle 09-0001")


def test_show_renders_escape_sequences_inert(tmp_path, capsys):
    spill = tmp_path / "tool-results"
    spill.mkdir()
    path = spill / "call_x.txt"
    path.write_bytes(b"\x1b[31mred\x1b[0m \x1b]0;title\x07bell\x07 \xe2\x80\xaetxt\n")
    assert main(["spill", "show", str(path), "--spill-root", str(spill)]) == 0
    assert capsys.readouterr().out == "red bell\\x07 \\u202etxt\n"


def test_show_refuses_files_outside_spill_roots(tmp_path, capsys):
    spill = tmp_path / "tool-results"
    spill.mkdir()
    (spill / "call_x.txt").symlink_to("/etc/passwd")
    assert main(["spill", "show", str(spill / "call_x.txt"), "--spill-root", str(spill)]) == 2
    assert capsys.readouterr().err == f"doctor: {spill / 'call_x.txt'}: is a symbolic link (links are not followed here)\n"
    assert main(["spill", "show", "/etc/passwd"]) == 2
    error = capsys.readouterr().err
    assert "/etc/passwd: not a spill file" in error and error.rstrip().endswith("pass --allow-outside to open it")
    assert main(["spill", "show", "/etc/passwd", "--allow-outside", "--limit", "1"]) == 0
    assert main(["spill", "show", str(spill / "call_x.txt"), "--allow-outside", "--limit", "1"]) == 0


def test_show_refuses_a_repositorys_spill_shaped_symlink_without_allow_outside(tmp_path, capsys):
    """A clone committing `tmp/<64 hex> -> /`: the path looks like Qwen's spill folder, it is not under the
    agents' folders (the roots come from their homes, never from the path), so it is not shown."""
    (tmp_path / "clone" / "tmp").mkdir(parents=True)
    (tmp_path / "clone" / "tmp" / ("ab" * 32)).symlink_to("/")
    assert main(["spill", "show", f"{tmp_path}/clone/tmp/{'ab' * 32}/etc/passwd"]) == 2
    assert "not a spill file" in capsys.readouterr().err


def test_show_bad_usage_exits_2(gate):
    with pytest.raises(SystemExit) as exit_info:
        main(["spill", "show", str(gate / GATE_FILE), "--offset", "-1"])
    assert exit_info.value.code == 2


@pytest.fixture
def giant(tmp_path):
    """One 5 MB line with a needle deep inside (past any per-line cap), then a short line."""
    spill = tmp_path / "tool-results"
    spill.mkdir()
    path = spill / "call_giant.txt"
    path.write_bytes(b"a" * 3_000_000 + b"NEEDLE" + b"b" * 2_000_000 + b"\nsecond line needle\n")
    return path


def test_show_cuts_a_giant_line_and_says_how_much_is_left(giant, capsys):
    assert main(["spill", "show", str(giant), "--spill-root", str(giant.parent)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("a" * 100) and first.endswith(f"… [{5_000_006 - 16_384:,} more bytes on this line]")
    assert second == "second line needle"


def test_show_grep_finds_a_match_deep_in_a_giant_line(giant, capsys):
    assert main(["spill", "show", str(giant), "--grep", "(?i)needle", "--spill-root", str(giant.parent)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith("1: …[char 3,000,000] aaa") and "aNEEDLEb" in first
    assert second == "2: second line needle"


def test_show_grep_matches_within_one_line(giant, capsys):
    assert main(["spill", "show", str(giant), r"--grep=b\s+second", "--spill-root", str(giant.parent)]) == 0
    assert capsys.readouterr().out == ""


def test_show_binary_file_as_hex_rows(tmp_path, capsys):
    spill = tmp_path / "tool-results"
    spill.mkdir()
    (spill / "call_bin.txt").write_bytes(bytes(range(256)))
    assert main(["spill", "show", str(spill / "call_bin.txt"), "--offset", "4", "--limit", "1",
                 "--spill-root", str(spill)]) == 0
    assert capsys.readouterr().out.startswith("00000040  40 41 42")


def test_qwens_own_files_in_the_project_temp_dir_are_not_orphans(gate, capsys):
    """Qwen keeps logs.json (its prompt log), checkpoint-<tag>.json and shell_history beside the spills.

    Names from Qwen 0.24.4's Logger (LOG_FILE_NAME, `checkpoint-${tag}.json`) and its shell
    history (`<project temp dir>/shell_history`). A real stray spill file is still an orphan.
    """
    temp = gate / "tmp"
    (temp / "logs.json").write_text('[{"sessionId": "s", "messageId": 0, "type": "user", "message": "go"}]')
    (temp / "checkpoint-mine.json").write_text("[]")
    (temp / "shell_history").write_text("ls\n")
    stray = temp / "run_shell_command_0123456789ab.output"
    stray.write_text("nobody points here")
    assert main(["spill", "verify", str(gate / "session.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["orphans"] == [str(stray)]
    assert main(["memory", str(gate / "session.jsonl"), "--json", "--paths", "full"]) == 0
    assert json.loads(capsys.readouterr().out)["spill"]["orphans"] == [str(stray)]


def test_show_a_missing_file_says_no_such_file(tmp_path, capsys):
    """Not "outside any agent spill directory … --allow-outside": the file is not there at all."""
    missing = tmp_path / "nowhere" / "call_x.txt"
    assert main(["spill", "show", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"doctor: {missing}: no such file\n"


def test_show_offset_past_the_end_says_so(gate, capsys):
    path = gate / GATE_FILE
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert main(["spill", "show", str(path), "--offset", str(lines), "--spill-root", str(gate / "tmp")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"doctor: {path}: --offset {lines} is past the end: the file has {lines} lines "
                                 f"(offsets 0 to {lines - 1})\n")
    assert main(["spill", "show", str(path), "--offset", str(lines - 1), "--spill-root", str(gate / "tmp")]) == 0


def test_show_grep_numbers_lines_from_one_like_grep_n(gate, capsys):
    """The same numbers as `grep -n` and the TUI pager (the file's 5th line is 5)."""
    path = next(gate.glob("tmp/grep_search_*.output"))
    wanted = r"needle 09-0001 "
    expected = [f"{number}: {line}" for number, line in enumerate(path.read_text().splitlines(), 1)
                if re.search(wanted, line)]
    assert main(["spill", "show", str(path), "--grep", wanted, "--spill-root", str(gate / "tmp")]) == 0
    assert capsys.readouterr().out.splitlines() == expected and expected[0].startswith("5: ")
