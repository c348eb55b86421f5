"""Settings files with comments, as Gemini CLI and Qwen Code read them: parsed, edited in place, refused.

Both agents strip `//` and `/* */` comments from settings.json before JSON.parse (the real clients read
what doctor writes: tests/integrations/test_slash_real_clients.py). The property tests generate
commented files in many layouts (pretty with two or four spaces or tabs, inline, comments in every
gap) and doctor-like edits (keys set at a path, list items appended or taken out): the parse must equal
JSON.parse of the same text without its comments, the edited text must read back as the edited object
with every comment still there, and undoing the edit must give back the file byte for byte (install,
then uninstall).
"""

from __future__ import annotations

import copy
import json
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor import cli
from doctor.core import jsonc

EXAMPLES = max(100, int(os.environ.get("DOCTOR_DIFFERENTIAL_EXAMPLES", "400")) // 2)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                     st.text(alphabet=st.sampled_from(list('ab/*"\\\n\té中😀{}[],:')), max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "c", "//", "/*x*/"]), inner, max_size=4)),
    max_leaves=12)
_DOCUMENTS = st.dictionaries(st.sampled_from(["model", "ui", "hooks", "permissions", "env"]), _VALUES, max_size=4)


def _render(value, rng: random.Random, unit: str, depth: int = 0, inline: bool = False) -> tuple[str, str, int]:
    """(text with comments, the same text without them, how many comments) in a layout `rng` picks."""
    if not isinstance(value, (dict, list)) or not value:
        text = json.dumps(value, ensure_ascii=False)
        return text, text, 0
    inline = inline or rng.random() < 0.3
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    parts, plain, comments = [opening], [opening], 0
    items = list(value.items()) if isinstance(value, dict) else [(None, item) for item in value]
    for index, (key, item) in enumerate(items):
        gap = " " if inline else "\n" + unit * (depth + 1)
        if rng.random() < 0.3:  # a note before the member
            note = "/* note */ " if inline else "// note\n" + unit * (depth + 1)
            parts.append(gap + note)
            plain.append(gap + (" " * len(note) if inline else "\n" + unit * (depth + 1)))
            comments += 1
        else:
            parts.append(gap)
            plain.append(gap)
        label = json.dumps(key, ensure_ascii=False) + ": " if key is not None else ""
        text, bare, inner = _render(item, rng, unit, depth + 1, inline)
        parts.append(label + text)
        plain.append(label + bare)
        comments += inner
        if index < len(items) - 1:
            parts.append(",")
            plain.append(",")
        if not inline and rng.random() < 0.3:  # a note after it, on its line
            parts.append(" // after")
            comments += 1
    parts.append(" " + closing if inline else "\n" + unit * depth + closing)
    plain.append(" " + closing if inline else "\n" + unit * depth + closing)
    return "".join(parts), "".join(plain), comments


_EDITS = st.lists(st.tuples(st.sampled_from(["set", "append", "remove"]),
                            st.lists(st.sampled_from(["model", "ui", "hooks", "a", "b", "statusLine"]), min_size=1,
                                     max_size=3),
                            _VALUES), max_size=4)


def _edited(document: dict, edits) -> dict:
    """What doctor's edits do to a parsed settings object: set a key at a path (creating what is missing),
    append to a list, take the first item out of a list or a key out of an object."""
    edited = copy.deepcopy(document)
    for kind, path, value in edits:
        holder = edited
        for key in path[:-1]:
            if not isinstance(holder.get(key), dict):
                if key in holder:
                    break
                holder[key] = {}
            holder = holder[key]
        else:
            last = path[-1]
            if kind == "set":
                holder[last] = value
            elif kind == "append" and isinstance(holder.get(last), list):
                holder[last].append(value)
            elif kind == "remove" and isinstance(holder.get(last), list) and holder[last]:
                holder[last].pop(0)
            elif kind == "remove":
                holder.pop(last, None)
    return edited


@settings(max_examples=EXAMPLES)
@given(document=_DOCUMENTS, seed=st.integers(0, 2**32), unit=st.sampled_from(["  ", "    ", "\t"]), edits=_EDITS)
def test_commented_settings_are_read_as_the_agent_reads_them_and_edited_in_place(document, seed, unit, edits):
    text, plain, comments = _render(document, random.Random(seed), unit)
    parsed, tree = jsonc.parse(text)
    assert jsonc.same(parsed, json.loads(plain)) and jsonc.same(parsed, document)

    edited = _edited(document, edits)
    after = jsonc.edit_text(text, tree, parsed, edited)
    assert jsonc.same(jsonc.parse(after)[0], edited), after
    undone = jsonc.edit_text(after, jsonc.parse(after)[1], edited, document)
    assert jsonc.same(jsonc.parse(undone)[0], document)
    if all(kind == "set" and path[0] not in document for kind, path, _ in edits):  # new keys only, as install adds
        assert after.count("// note") + after.count("/* note */") + after.count("// after") == comments
        assert undone == text  # taking them out again gives the file back byte for byte


@pytest.mark.parametrize("text, where", [
    ('{"a": 1,}', "line 1: a comma before the closing bracket"),
    ('{\n  "a": [1, 2,]\n}', "line 2: a comma before the closing bracket"),
    ('{\n  "a": "\\q"\n}', "line 2: not a valid string"),
    ('{"a": 1} {"b": 2}', "line 1: more after the value"),
    ('{"a": 01}', "line 1"),
    ("[" * 300 + "]" * 300, "nested too deep"),
])
def test_what_the_agents_would_not_read_is_refused_naming_the_line(text, where):
    with pytest.raises(ValueError, match=where):
        jsonc.parse(text)


def test_an_unclosed_comment_runs_to_the_end_as_strip_json_comments_reads_it():
    """strip-json-comments (both agents) blanks an unclosed `/*` to the end of the text, so JSON.parse
    reads what came before it."""
    assert jsonc.parse('{"a": 1} /* never closed\n}')[0] == {"a": 1}
    with pytest.raises(ValueError, match="line 1: the text ends too early"):
        jsonc.parse('{"a": 1 /* never closed }')


def test_a_bom_is_skipped_and_kept():
    parsed, tree = jsonc.parse('\ufeff// note\n{"a": 1}')
    assert parsed == {"a": 1}
    assert jsonc.edit_text('\ufeff// note\n{"a": 1}', tree, parsed, {"a": 1, "b": 2}) == '\ufeff// note\n{"a": 1, "b": 2}'


USER_SETTINGS = """{
  // my comment
  "model": {"name": "x"}, /* block */
  "permissions": {"allow": ["a"]},
  "ui": {
    "hideTips": true // tips off
  }
}
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    for name in ("QWEN_HOME", "GEMINI_CLI_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "DOCTOR_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize("agent, folder, entry", [("qwen", ".qwen", "doctor statusline qwen"),
                                                  ("gemini", ".gemini", "doctor hook gemini")])
def test_install_keeps_the_users_comments_and_uninstall_gives_the_file_back(agent, folder, entry, home, capsys):
    settings = home / folder / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS)

    assert cli.main(["install", agent]) == 0
    written = settings.read_text()
    for note in ("// my comment", "/* block */", "// tips off"):
        assert note in written
    assert entry in written and jsonc.parse(written)[0]["ui"]["hideTips"] is True
    [backup] = settings.parent.glob("settings.json.doctor-backup-*")
    assert backup.read_text() == USER_SETTINGS

    assert cli.main(["uninstall", agent]) == 0
    assert settings.read_text() == USER_SETTINGS
    capsys.readouterr()


def test_a_trailing_comma_is_refused_for_qwen_as_qwen_refuses_it(home, capsys):
    """Qwen Code 0.24.4's sandbox-policy reader stops at a trailing comma ("Cannot read operator sandbox
    policy"), so doctor does not write into such a file."""
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // mine\n  "ui": {"hideTips": true},\n}\n')
    assert cli.main(["install", "qwen"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "not valid JSON with comments, as Qwen Code reads it (line 4" in error
    assert settings.read_text() == '{\n  // mine\n  "ui": {"hideTips": true},\n}\n'


def test_claude_settings_with_a_comment_are_still_refused(home, capsys):
    """Claude Code reads settings.json as plain JSON: with a comment, Claude Code 2.1.332 says "Invalid or
    malformed JSON" and loads none of the file (tried here), an error doctor must not build on."""
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('// mine\n{"model": "x"}\n')
    assert cli.main(["install", "claude"]) == 2
    assert "not valid JSON (line 1" in capsys.readouterr().err
    assert settings.read_text() == '// mine\n{"model": "x"}\n'


def test_a_key_given_twice_where_doctor_edits_is_refused_untouched(home, capsys):
    """The agent reads the last of the two; doctor does not guess which one to edit."""
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    text = '{\n  // mine\n  "permissions": {"allow": []},\n  "permissions": {"allow": ["x"]}\n}\n'
    settings.write_text(text)
    assert cli.main(["install", "qwen"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "a key given twice" in error and str(settings) in error
    assert settings.read_text() == text and sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("agent, folder, accepted", [("qwen", ".qwen", True), ("gemini", ".gemini", False),
                                                     ("claude", ".claude", False)])
def test_a_byte_order_mark_is_kept_where_the_agent_skips_it_and_refused_where_it_does_not(agent, folder, accepted,
                                                                                          home, capsys):
    """Qwen Code drops a leading BOM before JSON.parse; Gemini CLI reads settings.json with readFileSync(…,
    "utf-8"), which keeps it, and JSON.parse then fails (as it does for plain JSON): doctor does not
    build on a file its agent cannot read."""
    settings = home / folder / "settings.json"
    settings.parent.mkdir()
    text = '\ufeff{\n  "ui": {"hideTips": true}\n}\n'
    settings.write_text(text, encoding="utf-8")
    if accepted:
        assert cli.main(["install", agent]) == 0
        assert settings.read_text(encoding="utf-8").startswith('\ufeff{\n  "ui": {"hideTips": true, "statusLine"')
        assert cli.main(["uninstall", agent]) == 0
        assert settings.read_text(encoding="utf-8") == text
    else:
        assert cli.main(["install", agent]) == 2
        assert "byte order mark" in capsys.readouterr().err
        assert settings.read_text(encoding="utf-8") == text


def test_a_key_given_twice_where_doctor_does_not_edit_stays_both_times(home, capsys):
    """The agent reads the last of the two; doctor edits around them and leaves both, byte for byte."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    text = '{\n  // mine\n  "ui": {"theme": "a", "theme": "b"},\n  "model": {"name": "x"}\n}\n'
    settings.write_text(text)
    assert cli.main(["install", "gemini"]) == 0
    assert '"ui": {"theme": "a", "theme": "b"},' in settings.read_text()
    assert cli.main(["uninstall", "gemini"]) == 0
    assert settings.read_text() == text
    capsys.readouterr()
