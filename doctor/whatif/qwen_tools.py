"""Qwen Code 0.24.4's tools that cut their own output by the replayed settings: read_file, grep_search, glob.

These tools apply `tools.truncateToolOutputLines` and `tools.truncateToolOutputThreshold` themselves, before
anything is recorded, so what the session keeps of them is already the capped output. Each function here
reads the recorded output back into what it shows (the lines of the file, the matches, the paths) and
renders the output the tool would have produced under other limits, with the tool's own code (sources
beside each function). When the new limits would show more than the recording kept, it raises
NotKept saying what is missing: the answer is unknown, never guessed.

Texts are in UTF-16 unit form (doctor.whatif.jsstring.to_units).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

READ_TRUNCATED_MARK = "... [truncated]"
_READ_HEADER = re.compile(r"Showing lines (\d+)-(\d+) of (at least )?(\d+) total lines\.\n\n---\n\n")
_GREP_TRAILER = re.compile(r" \[(\d+) lines? truncated\] \.\.\.\Z")
_GLOB_TRAILER = re.compile(r"\n---\n(\[(\d+) files? truncated\] \.\.\.|\[Results truncated after scanning \d+ matching "
                           r"files\. Narrow the pattern or path\.\])\Z")
MAX_FILE_COUNT = 100  # glob (chunk-XL6T7DD7.js, MAX_FILE_COUNT)
# JavaScript's String.prototype.trim: WhiteSpace and LineTerminator code points.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class NotKept(Exception):
    """The recording does not keep what these limits would have shown; the message says what."""


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def _int_arg(args: Mapping, name: str) -> int | None:
    value = args.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- read_file ---------------------------------------------------------------------------------


class _KnownLines:
    """The file's lines a read_file output shows: indices first..first+len-1; the last may be cut short."""

    def __init__(self, recorded: str):
        header = _READ_HEADER.match(recorded)
        if header is None:
            self.lines = recorded.split("\n")
            self.first = 0
            self.total: int | None = len(self.lines)
            self.cut = False
            return
        body = recorded[header.end():]
        self.lines = body.split("\n")
        self.first = int(header.group(1)) - 1
        self.total = None if header.group(3) else int(header.group(4))
        # A last line ending with the marker was cut by the char cap (taken as cut either way: a real line
        # with that ending only makes the replay say "unknown" more often, never wrong).
        self.cut = self.lines[-1].endswith(READ_TRUNCATED_MARK)

    def line(self, index: int) -> str:
        """The whole line, or NotKept."""
        offset = index - self.first
        whole = len(self.lines) - (1 if self.cut else 0)
        if 0 <= offset < whole:
            return self.lines[offset]
        kept = f"lines {self.first + 1}–{self.first + whole}" if whole else "no line"
        raise NotKept(f"these limits would show line {index + 1} of the file whole; the recording kept {kept} whole")

    def cut_prefix(self, index: int) -> str | None:
        """The known start of a line the recording cut short, else None."""
        if self.cut and index - self.first == len(self.lines) - 1:
            return self.lines[-1][: -len(READ_TRUNCATED_MARK)]
        return None


@lru_cache(maxsize=4096)
def _known_lines(recorded: str) -> _KnownLines:
    return _KnownLines(recorded)


def read_file_under(recorded: str, args: Mapping, threshold: float, line_cap: float) -> str:
    """A text file's read_file output under other limits (`processSingleFileContent`, chunk-NNN2PKPV.js:3187–3251,
    and `ReadFileToolInvocation.execute`, chunk-2VS5EEXU.js:8374)."""
    known = _known_lines(recorded)
    offset = _int_arg(args, "offset")
    limit = _int_arg(args, "limit")
    start_line = offset or 0
    limit = line_cap if limit is None else limit
    if known.total is None:
        raise NotKept("the recording gives the file's line count only as a lower bound")
    total = known.total
    if known.first == 0 and not known.cut and len(known.lines) == total and start_line == 0 and limit >= total \
            and len(recorded) <= threshold:
        return recorded  # the whole file, and it fits: nothing to page
    start = min(max(0, start_line), total)
    end = min(start + max(0, limit), total)
    lines_included = 0
    length_cut = False
    parts: list[str] = []
    if end <= start:  # an empty selection still reads as one empty line
        parts, lines_included = [""], 1
    else:
        whole = known.lines[:-1] if known.cut else known.lines
        if start < known.first:
            known.line(start)  # raises NotKept: the recording starts later in the file
        visible = whole[start - known.first : end - known.first]
        finite = math.isfinite(threshold)
        current = 0
        for line in visible:
            sep = 1 if lines_included > 0 else 0
            lines_included += 1
            projected = current + len(line) + sep
            if not finite or projected <= threshold:
                parts.append(line)
                current = projected
            else:
                parts.append(line[: int(max(threshold - current - sep, 10))] + READ_TRUNCATED_MARK)
                length_cut = True
                break
        else:
            if start + len(visible) < end:  # the selection runs past the lines the recording kept whole
                index = start + len(visible)
                prefix = known.cut_prefix(index)
                sep = 1 if lines_included > 0 else 0
                if prefix is None or not finite or current + len(prefix) + 1 + sep <= threshold:
                    known.line(index)  # raises NotKept, naming what is missing
                remaining = max(threshold - current - sep, 10)
                if remaining > len(prefix):
                    raise NotKept(f"these limits would show more of line {index + 1} than the recording kept")
                parts.append(prefix[: int(remaining)] + READ_TRUNCATED_MARK)
                lines_included += 1
                length_cut = True
    content = "\n".join(parts)
    end_line = start_line + lines_included
    if start_line > 0 or end_line < total or length_cut:
        return f"Showing lines {start_line + 1}-{end_line} of {total} total lines.\n\n---\n\n{content}"
    return content


# --- grep_search -------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _grep_output(recorded: str, pattern: str | None) -> _GrepOutput:
    return _GrepOutput(recorded, {"pattern": pattern})


class _GrepOutput:
    """A built-in GrepTool output (chunk-B4VI3YG6.js:130–215) read back.

    The tool appends chunks (`File: f`, `L<n>: text`, `---`) to one stream and, when the stream would pass
    the char cap, keeps exactly its first `cap` chars and adds `...`. So the stream for the first k matches
    is fully known when the recording lists them whole, and its first `known` chars are known when the
    recording cut it there.
    """

    def __init__(self, recorded: str, args: Mapping):
        pattern = args.get("pattern")
        head = re.match(r"Found (\d+) match(?:es)? for pattern ", recorded)
        if head is None or not isinstance(pattern, str) or not recorded.startswith(f'"{pattern}" ', head.end()):
            raise NotKept("the grep output does not have the form doctor replays")
        end = recorded.find(":\n---\n", head.end() + len(pattern) + 2)
        if end < 0:
            raise NotKept("the grep output does not have the form doctor replays")
        self.header = recorded[: end + len(":\n---\n")]
        self.total = int(head.group(1))
        body = recorded[len(self.header):]
        trailer = _GREP_TRAILER.search(body)
        self.char_cut = trailer is not None and body[: trailer.start()].endswith("...")
        stream = body[: trailer.start()] if trailer is not None else body + "\n"  # trim() took the last newline
        if self.char_cut:
            stream = stream[:-3]
        self.known_stream = stream
        lines = stream.split("\n")
        complete = lines[:-1]  # the part after the last newline is empty, or the start of a cut chunk
        self.matches: list[tuple[str, str]] = []
        current = None
        for line in complete:
            if line.startswith("File: "):
                current = line[len("File: "):]
            elif line == "---":
                continue
            elif current is not None and re.match(r"L\d+: ", line):
                self.matches.append((current, line))
            else:
                raise NotKept("the grep output does not have the form doctor replays (ripgrep's?)")


def _grep_stream(matches: Sequence[tuple[str, str]]) -> str:
    chunks = []
    current = None
    for file, line in matches:
        if file != current:
            if current is not None:
                chunks.append("---\n")
            chunks.append(f"File: {file}\n")
            current = file
        chunks.append(line + "\n")
    if current is not None:
        chunks.append("---\n")
    return "".join(chunks)


def _known_prefix(grep: _GrepOutput) -> str:
    """The start of the stream for more matches than the recording lists whole: what it kept of the cut
    chunk, or else the whole matches without the closing `---` (the next match may be in the same file)."""
    if grep.char_cut:
        return grep.known_stream
    return _grep_stream(grep.matches)[: -len("---\n")] if grep.matches else ""


def grep_under(recorded: str, args: Mapping, threshold: float, line_cap: float) -> str:
    """The built-in grep's output under other limits (`GrepToolInvocation.execute`, chunk-B4VI3YG6.js:130–215)."""
    if not recorded.startswith("Found "):
        return recorded  # "No matches found …": no cap applies
    pattern = args.get("pattern")
    grep = _grep_output(recorded, pattern if isinstance(pattern, str) else None)
    limit = _int_arg(args, "limit")
    line_limit = min(line_cap, limit if limit is not None else math.inf)
    by_line_limit = grep.total > line_limit
    count = int(line_limit) if by_line_limit else grep.total
    if count <= len(grep.matches):
        stream = _grep_stream(grep.matches[:count])
        by_char_limit = math.isfinite(threshold) and len(stream) > threshold
        out = stream[: int(threshold)] + "..." if by_char_limit else stream
    elif math.isfinite(threshold) and threshold <= len(known := _known_prefix(grep)):
        # More matches than the recording lists whole, but the cap falls in the part of the stream it kept.
        out, by_char_limit = known[: int(threshold)] + "...", True
    else:
        raise NotKept(f"these limits would show more of the {grep.total} matches than the recording kept "
                      f"({len(grep.matches)} whole)")
    included = sum(1 for line in out.split("\n") if js_trim(line) and not line.startswith(("File:", "---")))
    text = grep.header + out
    if by_line_limit or by_char_limit:
        omitted = grep.total - included
        text += f" [{omitted} {'line' if omitted == 1 else 'lines'} truncated] ..."
    return js_trim(text)


# --- glob ---------------------------------------------------------------------------------------


def glob_under(recorded: str, args: Mapping, line_cap: float) -> str:
    """glob's output under another line cap (`GlobToolInvocation.execute`, chunk-XL6T7DD7.js:201–258)."""
    head = re.match(r"Found (at least )?(\d+) file\(s\) matching ", recorded)
    pattern = args.get("pattern")
    if head is None or not isinstance(pattern, str):
        return recorded  # "No files found …"
    marker = ", sorted by modification time (newest first):\n---\n"
    end = recorded.find(marker, head.end() + len(pattern) + 2)
    if end < 0:
        raise NotKept("the glob output does not have the form doctor replays")
    header = recorded[: end + len(marker)]
    hit_collection_limit = head.group(1) is not None
    total = int(head.group(2))
    body = recorded[len(header):]
    trailer = _GLOB_TRAILER.search(body)
    if trailer is not None:
        body = body[: trailer.start()]
    paths = body.split("\n")
    file_limit = min(MAX_FILE_COUNT, line_cap)
    truncated = hit_collection_limit or total > file_limit
    shown = int(min(file_limit, total)) if truncated else total
    if shown > len(paths):
        raise NotKept(f"these limits would list {shown} files; the recording kept {len(paths)}")
    text = header + "\n".join(paths[:shown])
    if hit_collection_limit:
        text += f"\n---\n[Results truncated after scanning {total} matching files. Narrow the pattern or path.]"
    elif truncated:
        omitted = total - int(file_limit)
        text += f"\n---\n[{omitted} {'file' if omitted == 1 else 'files'} truncated] ..."
    return text
