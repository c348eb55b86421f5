"""Settings files (JSON, and JSON with comments), read as their agent reads them and edited in place.

Gemini CLI 0.61 and Qwen Code 0.24.4 strip `//` and `/* */` comments from settings.json before
`JSON.parse` (strip-json-comments; Qwen drops a leading BOM too). Qwen's settings editor would take
trailing commas as well, but its sandbox-policy reader, run at every start, does not: it stops with
"Cannot read operator sandbox policy" (seen with the real client), so a trailing comma is refused
here as there. A user's commented settings file is valid for both agents, so doctor must neither
refuse it nor drop its comments when it adds its entries. `parse` reads such a file as the
agent does; `edit_text` changes only the members and items an edit changed, as text: a removed one
cut out with its comma, an added one written after the last kept one in the file's own indent, a
changed scalar replaced. Everything else (comments, spacing, key order) stays byte for byte, and
the caller checks that the result parses to exactly the edited object before anything is written.
Plain JSON files (Claude Code's settings, Codex's hooks.json: `parse(comments=False, bom=False)`)
are edited the same way, so a token Python would write back differently (`1e400` as `Infinity`,
which JSON.parse rejects; an escaped lone surrogate, which is not UTF-8 raw) or a key given twice
(the agent reads the last) stays as the user wrote it, unless doctor's edit is where it is.
"""

from __future__ import annotations

import json
import re

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?(?:\*/|\Z))  # unclosed, it runs to the end (strip-json-comments)
  | (?P<string>"(?:[^"\\\x00-\x1f]|\\.)*")
  | (?P<literal>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)
  | (?P<punct>[{}\[\]:,])
""", re.VERBOSE | re.DOTALL)
_MAX_DEPTH = 200  # far beyond any settings file; deeper is refused, not a RecursionError


class Node:
    """A value's place in the text: [start, end); an object's or array's members in order. (A plain
    class: `dataclasses` costs 6 ms to import, and the status line reads settings through here.)"""

    __slots__ = ("start", "end", "value", "keys", "members", "member_starts", "commas")

    def __init__(self, start: int, end: int, value: object = None):
        self.start, self.end, self.value = start, end, value
        self.keys: list[str] = []  # an object's member keys, in order
        self.members: list[Node] = []  # an object's values or an array's items
        self.member_starts: list[int] = []  # where each member begins (its key)
        self.commas: list[int | None] = []  # the comma after each member, if any


def parse(text: str, *, comments: bool = True, bom: bool = True) -> tuple[object, Node]:
    """The value `text` holds (comments and a leading BOM skipped) and its tree; ValueError naming the line.
    `comments=False` reads plain JSON as JSON.parse does (Claude Code's settings, Codex's hooks.json): a
    comment is an error; `bom=False` refuses a leading byte order mark (Gemini CLI and plain JSON.parse
    do not skip it)."""
    if not bom and text.startswith("\ufeff"):
        raise ValueError("line 1: a byte order mark before the value, which JSON.parse does not skip")
    tokens = _tokens(text, comments)
    parser = _Parser(text, tokens)
    root = parser.value(0)
    if parser.at < len(tokens):
        parser.fail("more after the value")
    return root.value, root


def edit_text(text: str, root: Node, old: object, new: object) -> str:
    """`text` (parsed into `root`, holding `old`) changed so that it holds `new`, touching only what
    differs. Raises ValueError where it cannot tell how (an edited object holding a key twice)."""
    edits: list[tuple[int, int, str]] = []
    _edit(text, root, old, new, _indent_unit(text, root), edits)
    crlf = "\r\n" in text and "\n" not in text.replace("\r\n", "")  # new lines end as the file's lines do
    for start, end, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        text = text[:start] + (replacement.replace("\n", "\r\n") if crlf else replacement) + text[end:]
    return text


def _tokens(text: str, comments: bool = True) -> list[tuple[str, int, int]]:
    tokens, at = [], 1 if text.startswith("\ufeff") else 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            line = text.count("\n", 0, at) + 1
            raise ValueError(f"line {line}: unexpected {text[at]!r}")
        kind = match.lastgroup
        if not comments and kind in ("line_comment", "block_comment"):
            raise ValueError(f"line {text.count(chr(10), 0, at) + 1}: a comment, which plain JSON does not allow")
        if kind not in ("space", "line_comment", "block_comment"):
            tokens.append((kind, match.start(), match.end()))
        at = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str, tokens: list):
        self.text, self.tokens, self.at = text, tokens, 0

    def fail(self, what: str):
        place = self.tokens[self.at][1] if self.at < len(self.tokens) else len(self.text)
        raise ValueError(f"line {self.text.count(chr(10), 0, place) + 1}: {what}")

    def take(self, *accepted: str) -> tuple[str, int, int]:
        if self.at >= len(self.tokens):
            self.fail("the text ends too early")
        kind, start, end = self.tokens[self.at]
        token = self.text[start:end] if kind == "punct" else kind
        if token not in accepted:
            self.fail(f"expected {' or '.join(accepted)}, found {self.text[start:end][:20]!r}")
        self.at += 1
        return token, start, end

    def peek(self) -> str | None:
        if self.at >= len(self.tokens):
            return None
        kind, start, end = self.tokens[self.at]
        return self.text[start:end] if kind == "punct" else kind

    def value(self, depth: int) -> Node:
        if depth > _MAX_DEPTH:
            self.fail("nested too deep")
        token, start, end = self.take("{", "[", "string", "literal")
        if token in ("string", "literal"):
            try:
                return Node(start, end, json.loads(self.text[start:end]))
            except ValueError:  # an escape JSON.parse refuses (`\q`)
                self.at -= 1
                self.fail(f"not a valid string: {self.text[start:end][:20]!r}")
        closing = "}" if token == "{" else "]"
        node = Node(start, end, {} if token == "{" else [])
        while self.peek() != closing:
            if node.members and node.commas[-1] is None:
                self.take(",", closing)
            member_start = self.tokens[self.at][1] if self.at < len(self.tokens) else len(self.text)
            if token == "{":
                _, key_start, key_end = self.take("string")
                key = json.loads(self.text[key_start:key_end])
                self.take(":")
                item = self.value(depth + 1)
                node.keys.append(key)
                node.value[key] = item.value
            else:
                item = self.value(depth + 1)
                node.value.append(item.value)
            node.members.append(item)
            node.member_starts.append(member_start)
            comma = None
            if self.peek() == ",":
                comma = self.take(",")[1]
                if self.peek() == closing:
                    self.fail("a comma before the closing bracket")
            node.commas.append(comma)
        node.end = self.take(closing)[2]
        return node


def _edit(text: str, node: Node, old, new, unit: str, edits: list) -> None:
    if isinstance(old, dict) and isinstance(new, dict) and isinstance(node.value, dict):
        _refuse_edited_repeats(node.keys, old, new)
        kept = [key in new for key in node.keys]
        for index, key in enumerate(node.keys):
            if key in new and not same(old[key], new[key]):
                _edit(text, node.members[index], old[key], new[key], unit, edits)
        added = [(json.dumps(key, ensure_ascii=False) + ": ", new[key]) for key in new if key not in old]
        _rewrite_members(text, node, kept, added, unit, edits)
    elif isinstance(old, list) and isinstance(new, list) and isinstance(node.value, list):
        kept = _kept_items(old, new)
        added = [("", item) for item in new[sum(kept):]]
        _rewrite_members(text, node, kept, added, unit, edits)
    else:
        indent = _line_indent(text, node.start)
        edits.append((node.start, node.end, _dumped(new, indent, unit)))


def _refuse_edited_repeats(keys: list[str], old: dict, new: dict) -> None:
    """A key given twice stays as it is (both members, byte for byte: the agent reads the last) unless the
    edit changes or removes it: then which of the two to edit is a guess, and doctor does not guess."""
    if len(set(keys)) == len(keys):
        return
    seen, repeated = set(), set()
    for key in keys:
        (repeated if key in seen else seen).add(key)
    for key in keys:
        if key in repeated and (key not in new or not same(old[key], new[key])):
            raise ValueError(f"a key given twice ({json.dumps(key, ensure_ascii=False)}) where doctor edits")


def _kept_items(old: list, new: list) -> list[bool]:
    """Which items of `old` stay, `new` being those items followed by the rest of `new` (what doctor's
    list edits do: take some out, append): each old item in turn is kept if it is the next of `new`."""
    kept, at = [], 0
    for item in old:
        keep = at < len(new) and same(item, new[at])
        kept.append(keep)
        at += keep
    return kept


def _rewrite_members(text: str, node: Node, kept: list[bool], added: list[tuple[str, object]], unit: str,
                     edits: list) -> None:
    """Cut out the members not `kept` (each with its comma) and write the `added` ones after the last
    kept one, in the container's layout (one per line, or inline when it is on one line)."""
    count = len(node.members)
    inline = "\n" not in text[node.start:node.end]
    cuts = []
    for index in range(count):
        if not kept[index]:
            start, end = node.member_starts[index], node.members[index].end
            if node.commas[index] is not None:
                end = node.commas[index] + 1
                if inline:  # `"a", ` goes with the space after its comma
                    end = _past_spaces(text, end, node.end)
            elif inline:  # the last item: the space before it goes too (its comma is the one before it)
                start = len(text[:start].rstrip(" \t"))
            cuts.append(_whole_lines(text, start, end))
    last_kept = max((index for index in range(count) if kept[index]), default=None)
    # The old last member is gone and had no comma after it: the last kept one's comma would dangle.
    dangling = last_kept is not None and last_kept < count - 1 and node.commas[count - 1] is None \
        and node.commas[last_kept] is not None
    noted = False  # the last kept member is followed on its line by a `//` note, which stays with it
    if last_kept is not None and not inline:
        after = node.commas[last_kept] + 1 if node.commas[last_kept] is not None else node.members[last_kept].end
        line_end = text.find("\n", after)
        noted = line_end > 0 and text[after:line_end].strip().startswith("//") \
            and (node.commas[last_kept] is None or dangling)
    if dangling and not (added and noted):
        comma = node.commas[last_kept]
        cuts.append((comma, _past_spaces(text, comma + 1, node.end) if inline else comma + 1))
    for start, end in _merged(cuts):  # inline, neighbouring cuts share the spaces between them
        edits.append((start, end, ""))
    if not added:
        return
    outer = _line_indent(text, node.start)
    first = node.member_starts[0] if count else None
    if first is not None and not inline and _line_indent(text, first) == text[text.rfind("\n", 0, first) + 1:first]:
        indent = _line_indent(text, first)
    else:
        indent = outer + unit
    pieces = [label + _dumped(value, "" if inline else indent, unit, inline) for label, value in added]
    if inline:
        body, lead, tail = ", ".join(pieces), ", ", ""
    else:
        body, lead, tail = (",\n" + indent).join(pieces), ",\n" + indent, "\n" + outer
    if last_kept is not None:
        anchor = node.members[last_kept].end
        if noted:  # `"a": 1 // about a`: the new members go on the lines after the note
            if node.commas[last_kept] is None:
                edits.append((anchor, anchor, ","))
            edits.append((line_end, line_end, "\n" + indent + body))
        else:
            edits.append((anchor, anchor, lead + body))
    elif inline:
        edits.append((node.start + 1, node.start + 1, body))
    elif not text[text.rfind("\n", 0, node.end - 1) + 1:node.end - 1].strip():  # `}` opens its own line
        closing_line = text.rfind("\n", 0, node.end - 1) + 1
        edits.append((closing_line, closing_line, indent + body + "\n"))
    else:
        edits.append((node.end - 1, node.end - 1, "\n" + indent + body + tail))


def _past_spaces(text: str, at: int, stop: int) -> int:
    """Where the spaces and tabs from text[at] on end (at most `stop`)."""
    while at < stop and text[at] in " \t":
        at += 1
    return at


def _whole_lines(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end], widened to whole lines when nothing else is on them."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        return line_start, min(line_end + 1, len(text))
    return start, end


def _merged(cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(cuts):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(text: str, root: Node) -> str:
    """One level of the file's indent: its first member's own, or two spaces."""
    if root.member_starts:
        indent = _line_indent(text, root.member_starts[0])
        if indent and "\n" in text[root.start:root.member_starts[0]]:
            return indent
    return "  "


def _dumped(value, indent: str, unit: str, inline: bool = False) -> str:
    """`value` as JSON text; a number JSON has no token for (a user's `1e400`, Infinity once parsed) is
    refused rather than written as `Infinity`, which JSON.parse rejects."""
    try:
        if inline:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        return json.dumps(value, indent=unit, ensure_ascii=False, allow_nan=False).replace("\n", "\n" + indent)
    except ValueError:
        raise ValueError("a number doctor could not write back as it was (such as 1e400) where doctor edits") from None


def same(a, b) -> bool:
    """Equal as JSON: the same types (1 is not true, 1 is not 1.0), objects in any key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b

