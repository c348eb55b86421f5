"""The pager engine: index, pages, giant lines, search, follow, binary, errors."""

from __future__ import annotations

import os
import tracemalloc

import pytest

from doctor.spill.errors import SpillFileError
from doctor.spill.line_index import LINES_PER_CHECKPOINT, LineIndex
from doctor.spill.pager import REGEX_OVERLAP, SEARCH_BLOCK, FileChange, Match, Pager


def write(tmp_path, data: bytes, name: str = "spill.txt"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def numbered(count: int, *, newline: bytes = b"\n", trailing: bool = True) -> bytes:
    body = newline.join(f"line {i} {'x' * (i % 37)}".encode() for i in range(count))
    return body + (newline if trailing else b"")


def expected_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n") or not text:
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def indexed(path) -> Pager:
    pager = Pager(path)
    assert pager.wait_until_indexed(10)
    return pager


# -- the index -----------------------------------------------------------------


@pytest.mark.parametrize("trailing", [True, False])
def test_index_counts_lines_and_checkpoints_every_1024(tmp_path, trailing):
    data = numbered(5000, trailing=trailing)
    path = write(tmp_path, data)
    fd = os.open(path, os.O_RDONLY)
    try:
        index = LineIndex(fd, len(data))
        index.start()
        assert index.wait(10)
        assert index.line_count == 5000
        starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
        for line in (0, 1024, 2048, 4096, 4999):
            assert index.checkpoint_for_line(line) == (line // 1024 * 1024, starts[line // 1024 * 1024])
        assert index.progress.done and index.progress.bytes_indexed == len(data)
        assert index.memory_bytes <= 8 * (5000 // LINES_PER_CHECKPOINT + 1) + 64
    finally:
        os.close(fd)


def test_index_crosses_chunk_boundaries_exactly(tmp_path):
    # 3 MiB of lines of varying length: checkpoints land on both sides of 1 MiB chunk edges.
    data = b"".join(b"y" * (i * 7919 % 700) + b"\n" for i in range(9000))
    path = write(tmp_path, data)
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    with indexed(path) as pager:
        assert pager.line_count == 9000
        for line in range(0, 9000, 1024):
            assert pager._index.checkpoint_for_line(line)[1] == starts[line]


def test_empty_file(tmp_path):
    with indexed(write(tmp_path, b"")) as pager:
        assert pager.line_count == 0
        assert pager.page(0, 10) == []
        assert pager.search("x") is None
        assert pager.char_window(0, 0, 10) == ""
        assert not pager.is_binary


# -- pages -------------------------------------------------------------------------


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
@pytest.mark.parametrize("trailing", [True, False])
def test_pages_match_read_file_semantics(tmp_path, newline, trailing):
    data = numbered(3000, newline=newline, trailing=trailing)
    expected = expected_lines(data)
    with Pager(write(tmp_path, data)) as pager:
        assert [line.text for line in pager.page(0, 5)] == expected[:5]
        pager.wait_until_indexed(10)
        for offset in (0, 1023, 1024, 2500, 2995, 2999, 3000, 5000):
            page = pager.page(offset, 10)
            assert [line.text for line in page] == expected[offset : offset + 10]
            assert [line.number for line in page] == list(range(offset, offset + len(page)))
        assert pager.line_count == 3000


def test_page_before_indexing_scans_from_the_start(tmp_path):
    data = numbered(20_000)
    with Pager(write(tmp_path, data), index=False) as pager:
        assert pager.line_count is None
        assert [line.text for line in pager.page(15_000, 3)] == expected_lines(data)[15_000:15_003]
        assert pager.progress.done is False


def test_invalid_utf8_shows_replacement_char(tmp_path):
    with indexed(write(tmp_path, b"ok\nbad \xff\xfe here\ncut \xe2\x82\n")) as pager:
        assert [line.text for line in pager.page(0, 5)] == ["ok", "bad \ufffd\ufffd here", "cut \ufffd"]


def test_long_lines_are_cut_and_skipped(tmp_path):
    data = b"short\n" + "é".encode() * 100_000 + b"\nafter\n"
    with indexed(write(tmp_path, data)) as pager:
        first, long, after = pager.page(0, 5, max_line_chars=100)
        assert (first.text, first.truncated) == ("short", False)
        assert long.text == "é" * 100 and long.truncated
        assert (after.text, after.number, after.byte_offset) == ("after", 2, len(data) - 6)


def test_giant_single_line_pages_in_bounded_memory(tmp_path):
    chunk = ("0123456789abcdef" * 64 + "ü").encode()  # non-ASCII: exercises the decoder path
    data = chunk * (50 * 1024 * 1024 // len(chunk))
    text_length = len(data.decode())
    path = write(tmp_path, data)
    del data
    with indexed(path) as pager:
        tracemalloc.start()
        try:
            page = pager.page(0, 10)
            middle = pager.char_window(0, text_length // 2, 200)
            end = pager.char_window(0, text_length - 50, 200)
            again = pager.char_window(0, text_length // 2 + 5, 10)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        unit = chunk.decode()
        assert len(page) == 1 and page[0].truncated and len(page[0].text) == 2000
        assert middle == (unit * 3)[(text_length // 2) % len(unit) :][:200]
        assert len(end) == 50 and end == (unit * 2)[-50:]
        assert again == middle[5:15]
        assert peak < 8 * 1024 * 1024
        assert pager.line_count == 1


def test_char_window_exact_offsets_and_line_ends(tmp_path):
    with indexed(write(tmp_path, "añb€c😀d\r\nnext\n".encode())) as pager:
        assert pager.char_window(0, 0, 100) == "añb€c😀d"
        assert pager.char_window(0, 3, 3) == "€c😀"
        assert pager.char_window(0, 6, 10) == "d"
        assert pager.char_window(0, 7, 10) == ""
        assert pager.char_window(1, 1, 2) == "ex"
        assert pager.char_window(9, 0, 2) == ""


# -- search --------------------------------------------------------------------------


def test_literal_search_forward_and_backward(tmp_path):
    data = "alpha\nbeta needle\nγ needle needle\n".encode()
    with indexed(write(tmp_path, data)) as pager:
        assert pager.search("needle") == Match(1, 5, 6)
        assert pager.search("needle", start=(1, 6)) == Match(2, 2, 6)
        assert pager.search("needle", start=(2, 3)) == Match(2, 9, 6)
        assert pager.search("needle", start=(2, 10)) is None
        assert pager.search("needle", backwards=True) == Match(2, 9, 6)
        assert pager.search("needle", backwards=True, start=(2, 9)) == Match(2, 2, 6)
        assert pager.search("needle", backwards=True, start=(1, 5)) is None
        assert pager.search("NEEDLE", ignore_case=True, start=(1, 6)) == Match(2, 2, 6)


def test_search_across_a_chunk_boundary(tmp_path):
    filler = b"z" * (SEARCH_BLOCK - 3 - len(b"head\n"))
    data = b"head\n" + filler + b"NEEDLE tail\n"  # the needle straddles the 4 MiB window edge
    with indexed(write(tmp_path, data)) as pager:
        assert pager.search("NEEDLE") == Match(1, len(filler), 6)
        assert pager.search("NEEDLE", backwards=True) == Match(1, len(filler), 6)
        assert pager.search("need", ignore_case=True) == Match(1, len(filler), 4)
        assert pager.search(r"NEE\w+ t", regex=True) == Match(1, len(filler), 8)
        assert pager.search(r"NEE\w+ t", regex=True, backwards=True) == Match(1, len(filler), 8)


def test_regex_search_anchors_lines(tmp_path):
    data = b"error: x\nno error\n  error: y\nerror: z\n"
    with indexed(write(tmp_path, data)) as pager:
        assert pager.search(r"^error: \w", regex=True) == Match(0, 0, 8)
        assert pager.search(r"^error: \w", regex=True, start=(0, 1)) == Match(3, 0, 8)
        assert pager.search(r"^error: \w", regex=True, backwards=True) == Match(3, 0, 8)
        assert pager.search(r"^error: \w", regex=True, backwards=True, start=(3, 0)) == Match(0, 0, 8)
        assert pager.search(r"error$", regex=True) == Match(1, 3, 5)


def test_backward_regex_across_windows_in_a_giant_line(tmp_path):
    data = b"a" * 100 + b"mark1" + b"b" * (SEARCH_BLOCK + REGEX_OVERLAP) + b"mark2" + b"c" * 100
    with indexed(write(tmp_path, data)) as pager:
        last = pager.search(r"mark\d", regex=True, backwards=True)
        assert last == Match(0, len(data) - 105, 5)
        assert pager.search(r"mark\d", regex=True, backwards=True, start=(0, last.char)) == Match(0, 100, 5)
        assert pager.search("mark", start=(0, 101)) == Match(0, len(data) - 105, 4)


def test_empty_pattern_is_rejected(tmp_path):
    with indexed(write(tmp_path, b"x\n")) as pager, pytest.raises(ValueError):
        pager.search("")


# -- follow ----------------------------------------------------------------------------


def test_follow_append_truncate_rotate(tmp_path):
    path = write(tmp_path, numbered(2000))
    with indexed(path) as pager:
        assert pager.refresh() is FileChange.UNCHANGED
        with open(path, "ab") as stream:
            stream.write(b"partial")
        assert pager.refresh() is FileChange.GREW
        with open(path, "ab") as stream:
            stream.write(b" line\nlast\n")
        assert pager.refresh() is FileChange.GREW
        assert pager.wait_until_indexed(10)
        assert pager.line_count == 2002
        assert [line.text for line in pager.page(1999, 5)] == [expected_lines(numbered(2000))[-1], "partial line", "last"]

        with open(path, "r+b") as stream:
            stream.truncate(10)
        assert pager.refresh() is FileChange.TRUNCATED
        assert pager.wait_until_indexed(10)
        assert pager.line_count == 2
        assert [line.text for line in pager.page(0, 5)] == ["line 0 ", "li"]

        os.rename(path, tmp_path / "spill.txt.1")
        path.write_bytes(b"fresh\n")
        assert pager.refresh() is FileChange.ROTATED
        assert pager.wait_until_indexed(10)
        assert [line.text for line in pager.page(0, 5)] == ["fresh"]


# -- binary, errors, read-only -----------------------------------------------------


def test_binary_detection_and_hex_rows(tmp_path):
    with indexed(write(tmp_path, b"\x7fELF\x00\x01" + bytes(range(40)))) as pager:
        assert pager.is_binary
        rows = pager.hex_page(0, 20)
        assert rows[0] == "00000000  7f 45 4c 46 00 01 00 01  02 03 04 05 06 07 08 09  |.ELF............|"
        assert rows[1].startswith("00000010  0a 0b 0c 0d ")
        assert rows[1].endswith("|....|")
    with indexed(write(tmp_path, bytes(range(1, 32)) * 40, "ctl.bin")) as pager:
        assert pager.is_binary
    with indexed(write(tmp_path, b"plain \x1b[31mred\x1b[0m\ttext\n" * 50, "ansi.txt")) as pager:
        assert not pager.is_binary


def test_errors_name_the_file(tmp_path):
    with pytest.raises(SpillFileError, match="no such file") as missing:
        Pager(tmp_path / "missing.txt")
    assert missing.value.path == str(tmp_path / "missing.txt")
    with pytest.raises(SpillFileError, match="is a directory"):
        Pager(tmp_path)
    locked = write(tmp_path, b"secret\n", "locked.txt")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as root: permissions are not enforced")
        with pytest.raises(SpillFileError, match="permission denied"):
            Pager(locked)
    finally:
        locked.chmod(0o600)


def test_the_file_is_never_modified(tmp_path):
    data = numbered(3000)
    path = write(tmp_path, data)
    os.chmod(path, 0o444)
    before = os.stat(path)
    with indexed(path) as pager:
        pager.page(100, 10)
        pager.search("line 2999")
        pager.char_window(5, 2, 3)
        pager.refresh()
    after = os.stat(path)
    assert path.read_bytes() == data
    assert (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
