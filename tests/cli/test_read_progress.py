"""The stderr progress bar of `doctor memory` on a long read."""

import io
import time
from pathlib import Path

from doctor.commands.read_progress import read_offset, reading_progress
from doctor.sources.registry import open_session

SESSION = Path(__file__).parents[1] / "recordings" / "qwen" / "multi-turn" / "session.jsonl"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_offset_of_an_open_file_is_read_from_the_kernel(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 5000)
    assert read_offset(path) is None
    with open(path, "rb", buffering=0) as handle:
        handle.read(1234)
        assert read_offset(path) == 1234


def test_bar_shows_on_a_terminal_for_a_slow_read_and_not_otherwise():
    terminal = Terminal()
    with reading_progress(SESSION, stream=terminal, delay=0):
        list(open_session(SESSION).history())
        time.sleep(0.3)
    assert "Reading session.jsonl" in terminal.getvalue()
    piped = io.StringIO()
    with reading_progress(SESSION, stream=piped, delay=0):
        list(open_session(SESSION).history())
    assert piped.getvalue() == ""
