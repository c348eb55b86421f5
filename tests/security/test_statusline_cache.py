"""The status line's cache, its last error and the slash command's full reports (issue 22, item 5).

Attacks as they happen: another local user who made doctor's cache folder first (`HOME=/tmp`, a
shared `XDG_CACHE_HOME`), or who plants symlinks in it, chooses what the status line reads back
and where it and `/doctor:memory` write. Each test runs the real command as a subprocess, with the
JSON on stdin the agent sends (`doctor statusline claude`) or the command line the command file
runs (`doctor slash claude --transcript FILE`), and checks what the attacker wanted did not
happen: no planted pickle ran, nothing was written into or through their folder or links, no
copy of the transcript's bytes was kept, and the user still gets the right line, told once on
stderr that the cache is not used.
"""

from __future__ import annotations

import json
import os
import pickletools
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDING = next((ROOT / "tests/recordings/claude/big-outputs/home/.claude/projects").glob("*/*.jsonl"))
LINE_START = "doctor: "
REFUSED = "not using the cache folder"
VICTIM_TEXT = "the user's own file\n"


def _run(home: Path, cache: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(cache)}
    for name in ("CLAUDE_CONFIG_DIR", "DOCTOR_CONFIG", "QWEN_HOME"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "doctor", *args], input=stdin, capture_output=True, env=env,
                          cwd=home, timeout=120)


def _status_line(home: Path, cache: Path, transcript: Path) -> subprocess.CompletedProcess:
    payload = {"session_id": "s", "transcript_path": str(transcript), "cwd": str(home)}
    return _run(home, cache, "statusline", "claude", stdin=json.dumps(payload).encode())


def _index_names(transcript: Path) -> list[str]:
    """Where an index of this transcript is looked for (this format's name and the pickle's before it)."""
    name = f"claude\0{transcript}".encode("utf-8", "surrogateescape")
    key = f"{zlib.crc32(name):08x}{zlib.adler32(name):08x}"
    return [f"{key}.msgpack", f"{key}.pickle"]


@pytest.fixture
def world(tmp_path: Path):
    """A home, a transcript, and a shared folder like /tmp (sticky, writable by all) as XDG_CACHE_HOME."""
    home = tmp_path / "home"
    home.mkdir()
    transcript = home / RECORDING.name
    transcript.write_bytes(RECORDING.read_bytes())
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    return home, transcript, shared


def _expected_line(home: Path, transcript: Path, tmp_path: Path) -> str:
    """The line with a cache of the user's own, nobody interfering."""
    done = _status_line(home, tmp_path / "own-cache", transcript)
    assert done.returncode == 0 and done.stdout.decode().startswith(LINE_START) and done.stderr == b""
    return done.stdout.decode()


def _foreign_folder(path: Path, other_user, mode: int = 0o755) -> Path:
    path.mkdir(parents=True)
    os.chmod(path, mode)
    other_user.own(path)
    return path


def _pickle_running(marker: Path) -> bytes:
    """A protocol-0 pickle that creates `marker` when loaded."""
    data = f"cposix\nsystem\n(S'touch {marker}'\ntR.".encode()
    pickletools.dis(data, out=open(os.devnull, "w"))  # a well-formed pickle
    return data


def test_a_pickle_planted_through_another_users_cache_folder_never_runs(world, other_user, tmp_path):
    home, transcript, shared = world
    expected = _expected_line(home, transcript, tmp_path)
    marker = tmp_path / "PWNED"
    planted = home / "notes.txt"  # a file of the user's whose text the attacker chose (a tool output, a spill)
    planted.write_bytes(_pickle_running(marker))
    folder = _foreign_folder(shared / "doctor" / "statusline", other_user)
    other_user.own(folder.parent)
    for name in _index_names(transcript):
        (folder / name).symlink_to(planted)
        other_user.own(folder / name)
    for _ in range(2):  # the second turn is the one that would load what the first saved
        done = _status_line(home, shared, transcript)
        assert done.returncode == 0 and done.stdout.decode() == expected
        assert not marker.exists(), "the planted pickle ran"
    assert done.stderr.decode().count(REFUSED) == 1, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == sorted(_index_names(transcript)), "wrote into their folder"


def test_an_index_that_is_a_symlink_in_the_users_own_folder_is_not_followed(world, tmp_path):
    home, transcript, _ = world
    cache = tmp_path / "cache"
    expected = _expected_line(home, transcript, tmp_path)
    marker = tmp_path / "PWNED"
    planted = home / "notes.txt"
    planted.write_bytes(_pickle_running(marker))
    folder = cache / "doctor" / "statusline"
    folder.mkdir(parents=True, mode=0o700)
    for name in _index_names(transcript):
        (folder / name).symlink_to(planted)
    done = _status_line(home, cache, transcript)
    assert (done.returncode, done.stdout.decode()) == (0, expected) and not marker.exists()
    assert planted.read_bytes() == _pickle_running(marker), "written through the link"


def test_a_cache_folder_another_user_made_first_is_refused_and_said_once(world, other_user, tmp_path):
    home, transcript, shared = world
    expected = _expected_line(home, transcript, tmp_path)
    _foreign_folder(shared / "doctor", other_user, 0o777)
    done = _status_line(home, shared, transcript)
    assert (done.returncode, done.stdout.decode()) == (0, expected)
    err = done.stderr.decode()
    assert err.count(REFUSED) == 1 and "another user" in err and str(shared / "doctor") in err, err
    assert list((shared / "doctor").iterdir()) == [], "wrote into their folder"


def test_a_symlink_planted_on_the_way_to_the_cache_is_not_followed(world, other_user, tmp_path):
    home, transcript, shared = world
    expected = _expected_line(home, transcript, tmp_path)
    victim = tmp_path / "victim"  # a folder of the user's the attacker would have doctor write into
    victim.mkdir(mode=0o700)
    (shared / "doctor").symlink_to(victim)
    other_user.own(shared / "doctor")
    done = _status_line(home, shared, transcript)
    assert (done.returncode, done.stdout.decode()) == (0, expected)
    assert done.stderr.decode().count(REFUSED) == 1, done.stderr
    assert list(victim.iterdir()) == [], "followed the planted link"


def _link_in_their_folder(shared: Path, other_user, folder: str, name: str, tmp_path: Path) -> Path:
    """Another user's `doctor/<folder>/`, open to all, holding `name` as a link to a file of the user's
    (0644); that file."""
    planted = _foreign_folder(shared / "doctor" / folder, other_user, 0o777)
    other_user.own(planted.parent)
    victim = tmp_path / "victim.conf"
    victim.write_text(VICTIM_TEXT)
    os.chmod(victim, 0o644)
    (planted / name).symlink_to(victim)
    other_user.own(planted / name)
    return victim


def test_last_error_is_not_written_through_a_planted_link(world, other_user, tmp_path):
    home, _, shared = world
    victim = _link_in_their_folder(shared, other_user, "statusline", "last-error.txt", tmp_path)
    unreadable = home / "session.jsonl"
    unreadable.write_bytes(b"\x00\x01 not a session\n")
    done = _run(home, shared, "statusline", "qwen", stdin=json.dumps(
        {"session_id": "s", "transcript_path": str(unreadable), "cwd": str(home)}).encode())
    assert (done.returncode, done.stdout) == (0, "doctor: —\n".encode())
    assert victim.read_text() == VICTIM_TEXT and victim.stat().st_mode & 0o777 == 0o644
    assert done.stderr.decode().count(REFUSED) == 1, done.stderr


def test_the_full_report_is_not_written_through_a_planted_link(world, other_user, tmp_path):
    home, transcript, shared = world
    session_id = json.loads(transcript.read_bytes().splitlines()[0])["sessionId"]
    victim = _link_in_their_folder(shared, other_user, "reports", f"claude-{session_id}.txt", tmp_path)
    done = _run(home, shared, "slash", "claude", "--transcript", str(transcript))
    assert done.returncode in (0, 3) and "Traceback" not in done.stderr.decode()
    assert done.stdout.decode().startswith("doctor memory — claude session") and "Full report" not in done.stdout.decode()
    assert victim.read_text() == VICTIM_TEXT and victim.stat().st_mode & 0o777 == 0o644
    assert done.stderr.decode().count(REFUSED) == 1, done.stderr


def test_the_index_keeps_digests_of_the_transcript_not_its_bytes(tmp_path):
    """`transcript_path` may name any file (it was /etc/shadow): the index keeps no copy of its head."""
    home = tmp_path / "home"
    home.mkdir()
    secret = home / "shadow"
    secret.write_bytes(b"root:$6$Zq4yWfS5$SECRETSALTEDHASHvalue:19700:0:99999:7:::\n" * 3)
    cache = tmp_path / "cache"
    for _ in range(2):
        done = _status_line(home, cache, secret)
        assert done.returncode == 0 and done.stdout.decode().startswith(LINE_START)
    stored = [p for p in cache.rglob("*") if p.is_file()]
    assert stored, "no index was written: the test proves nothing"
    for path in stored:
        assert b"SECRETSALTEDHASH" not in path.read_bytes(), f"{path} keeps the transcript's bytes"


def test_a_loose_cache_folder_of_the_users_own_is_closed_and_used(world, tmp_path):
    """An older doctor made `doctor/` with the umask's mode (0775 under a umask of 002): the user's own
    folder is made 0700 and used, not refused forever."""
    home, transcript, _ = world
    cache = tmp_path / "cache"
    (cache / "doctor").mkdir(parents=True)
    os.chmod(cache / "doctor", 0o775)
    done = _status_line(home, cache, transcript)
    assert done.returncode == 0 and done.stderr == b""
    assert (cache / "doctor").stat().st_mode & 0o777 == 0o700
    assert (cache / "doctor" / "statusline").stat().st_mode & 0o777 == 0o700
    assert [p.stat().st_mode & 0o777 for p in (cache / "doctor" / "statusline").iterdir()] == [0o600]
