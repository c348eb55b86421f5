"""The spill audit's shortcuts find exactly what the plain definitions find.

The scan job audits every session, so the audit skips work it can prove useless: strings that cannot
name a pointer are not parsed, a copy of a file already known is not placed at its call's result, the
locator does not look inside a directory it already found missing, and an orphan's real path is its
directory's plus its name. Each test compares a shortcut with the plain definition it replaces, on the
recordings, mutated recordings and crafted layouts.
"""

import json
import os
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.core.analysis import analyze_tool_result_retention
from doctor.core.sentinels import (
    BATCH_TRUNCATED_PREFIX,
    CLAUDE_MCP_SAVED_PREFIX,
    CODEX_EXEC_HEADER,
    GEMINI_MASKED_OPEN_TAG,
    GEMINI_TRUNCATED_PREFIX,
    MICROCOMPACT_CLEARED,
    NONE,
    OUTPUT_TOO_LARGE_PREFIX,
    PERSISTED_OUTPUT_OPEN_TAG,
    SENTINEL_PREFIXES,
    TOOL_OUTPUT_TRUNCATED_PREFIX,
    sentinel_kind,
)
from doctor.core.parts import field as part_field
from doctor.core.result_table import function_response_of, raw_result_text
from doctor.sources.autobot import ANCHOR_PREFIX, find_anchors
from doctor.sources.base import SourceError
from doctor.sources.registry import open_session
from doctor.spill import pointers as pointers_module
from doctor.spill.audit import audit_spill
from doctor.spill.pointers import may_name_pointers, pointers_for
from doctor.spill.resolve import SpillLocator, written_parts
from tests.hardening.mutations import CASES
from tests.spill.test_pointers import session_files

FUZZ = int(os.environ.get("DOCTOR_FUZZ_EXAMPLES", "40"))
ANCHOR = ANCHOR_PREFIX + "task-1:run_shell:0123456789abcdef"


def _recorded_stubs() -> list[str]:
    """Every result text of the recordings that some layer bounded: the stub forms the agents wrote."""
    texts = []
    for path in session_files():
        for content in open_session(path).history():
            for part in part_field(content, "parts") or ():
                response = function_response_of(part)
                raw = raw_result_text(response) if response is not None else None
                if isinstance(raw, str) and sentinel_kind(raw) != NONE:
                    texts.append(raw)
    return texts


# Each stub form the sentinels module knows, as the agents write it, and an AutoBot note.
CRAFTED_FORMS = [
    f"{TOOL_OUTPUT_TRUNCATED_PREFIX}.\nThe full output has been saved to: /h/.qwen/tmp/{'a' * 64}/x.output\n\n"
    "Truncated part of the output:\nline\n",
    f"{PERSISTED_OUTPUT_OPEN_TAG}\nOutput too large (61 KB). Full output saved to: /h/tool-results/c.txt\n"
    f"Full output sha256: {'b' * 64}\n\nPreview (up to 2000 chars):\nhead\n...\n</persisted-output>",
    f"{PERSISTED_OUTPUT_OPEN_TAG}\nOutput too large (1.2MB). Full output saved to: /p/0b1c2df2-ae4c-4b12-8427-204ca5e7f614/"
    "tool-results/toolu_1.txt\n\nPreview (first 2KB):\nhead\n...\n</persisted-output>",
    f"{BATCH_TRUNCATED_PREFIX} Persisted tool-output artifact: /h/tmp/batch/1.txt\n\nhead\n...\n",
    f"{BATCH_TRUNCATED_PREFIX}\nPersisted tool-output artifacts:\n- /h/tmp/batch/1.txt\n- /h/tmp/batch/2.txt\n\nhead",
    f"{OUTPUT_TOO_LARGE_PREFIX}60000 KB). (file too large to persist)\nFull output sha256: {'c' * 64}\n\nPreview (up to 2000 chars):\nx",
    f"{MICROCOMPACT_CLEARED}",
    f"{GEMINI_TRUNCATED_PREFIX} the first 8000 characters.\nhead\n\n... [truncated] For full output see: /g/tool-outputs/session-1/o.txt",
    f"{GEMINI_MASKED_OPEN_TAG}\nhead\nOutput too large. Full output available at: /g/tool-outputs/session-1/m.txt\n</tool_output_masked>",
    f"{CLAUDE_MCP_SAVED_PREFIX}374,984 characters) exceeds maximum allowed tokens. Output has been saved to "
    "/h/.claude/projects/p/0b1c2df2-ae4c-4b12-8427-204ca5e7f614/tool-results/mcp-wonk-ls-1.txt.\nFormat: JSON",
    f"{CODEX_EXEC_HEADER}ab12\nWall time: 1.0 seconds\nProcess exited with code 0\nWarning: truncated output (9000 tokens)\nOutput:\nx",
    f"Output truncated to 2000 of 9000 chars. Read the full output with the read_spilled_output tool using anchor '{ANCHOR}'.",
]
AFFIXES = ["", " ", "\n", "\ufeff", '"', "x", "\\", ANCHOR_PREFIX[:-1], ANCHOR]


@pytest.fixture(scope="module")
def forms() -> list[str]:
    return _recorded_stubs() + CRAFTED_FORMS


def test_every_stub_form_passes_the_string_test(forms):
    """The test the file scan makes before parsing a string lets every stub and anchor through."""
    assert len(forms) > len(CRAFTED_FORMS) and {text.split(maxsplit=1)[0] for text in forms} >= {
        prefix.split(maxsplit=1)[0] for prefix in SENTINEL_PREFIXES}
    for text in forms:
        assert may_name_pointers(text), text[:80]


@settings(max_examples=FUZZ * 5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.integers(0, 1 << 16), before=st.sampled_from(AFFIXES) | st.text(max_size=3),
       cut=st.integers(0, 1 << 16), after=st.sampled_from(AFFIXES) | st.text(max_size=3))
def test_a_string_the_test_skips_holds_no_stub_and_no_anchor(forms, form, before, cut, after):
    """Whatever the string test turns away, the stub parser and the anchor search would have found
    nothing in: every form, cut anywhere, with anything before and after it."""
    text = forms[form % len(forms)]
    text = before + text[: cut % (len(text) + 1)] + after
    if not may_name_pointers(text):
        assert sentinel_kind(text) == NONE and find_anchors(text) == []


def _every_string_tested(monkeypatch):
    """The file scan without the string test: every string goes to the stub parser and the anchor search."""
    monkeypatch.setattr(pointers_module, "may_name_pointers", lambda text: True)


def _scanned(path: Path) -> list:
    session = open_session(path)
    found = pointers_for(session, analyze_tool_result_retention(session.history()))
    return [(pointer, pointer.preview_head) for pointer in found]


@pytest.mark.parametrize("path", session_files(), ids=lambda p: f"{p.parts[-2]}/{p.name}"[-60:])
def test_the_string_test_changes_no_pointer_of_a_recording(path, monkeypatch):
    skipping = _scanned(path)
    with monkeypatch.context() as patch:
        _every_string_tested(patch)
        assert _scanned(path) == skipping


def test_the_string_test_changes_no_pointer_of_crafted_records(forms, tmp_path, monkeypatch):
    """Every stub form inside records as the agents nest them: a result's output, a Claude tool_result
    block and its toolUseResult (with persistedOutputPath), a list, a key named like a call id."""
    lines = []
    for number, text in enumerate(forms):
        call = f"call_{number}"
        lines += [
            {"message": {"parts": [{"functionResponse": {"id": call, "name": "t", "response": {"output": text}}}]}},
            {"message": {"content": [{"type": "tool_result", "tool_use_id": call, "content": [{"text": text}]}]},
             "toolUseResult": {"stdout": text, "persistedOutputPath": f"/h/tool-results/{call}.txt",
                               "persistedOutputSize": number}},
            {"saved to": [text, {"callId": call, "x": [[text]]}], "persistedOutputPath": 1},
        ]
    session = tmp_path / "records.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    def scanned():
        found = list(pointers_module._file_evidence("qwen", session, pointers_module.FROM_RECORD))
        return [(pointer, pointer.preview_head) for pointer in found]

    skipping = scanned()
    assert len(skipping) > 2 * len(forms)
    with monkeypatch.context() as patch:
        _every_string_tested(patch)
        assert scanned() == skipping


# -- merging: a known file's copy is matched before its ordinal is looked up ---------------------------


def _merged_plainly(session, analysis) -> list:
    """The plain definition of `pointers_for`: every side-channel pointer first placed at its call's
    result, then matched with the pointers kept so far by key, else by the file it names, in order."""
    merged = {}
    calls = analysis.calls() if analysis is not None else {}
    for row in analysis.with_stubs() if analysis is not None else ():
        for pointer in pointers_module._pointers_of_stub(session.agent, row):
            merged.setdefault(pointers_module._key(pointer), pointer)
    for pointer in pointers_module._evidence(session):
        if pointer.call_id in calls and pointer.ordinal is None:
            ordinal, tool = calls[pointer.call_id]
            pointer = replace(pointer, ordinal=ordinal, tool=pointer.tool or tool)
        target = pointer.path or pointer.anchor
        known = merged.get(pointers_module._key(pointer)) or next(
            (p for p in merged.values() if (p.path or p.anchor) == target and target is not None
             or target is None and p.path is None and p.anchor is None and p.call_id == pointer.call_id
             and p.kind == pointer.kind), None)
        if known is None:
            merged[pointers_module._key(pointer)] = pointer
            continue
        merged[pointers_module._key(known)] = replace(
            known,
            declared_bytes=known.declared_bytes if known.declared_bytes is not None else pointer.declared_bytes,
            preview_head=known.preview_head if known.preview_head is not None else pointer.preview_head,
            sha256=known.sha256 or pointer.sha256,
            declared_kb=known.declared_kb if known.declared_kb is not None else pointer.declared_kb,
            call_id=known.call_id or pointer.call_id,
        )
    return sorted(merged.values(), key=lambda p: (p.ordinal is None, p.ordinal or 0))


def _both_merges(path: Path) -> tuple[list, list]:
    session = open_session(path)
    analysis = analyze_tool_result_retention(session.history())
    fast = pointers_for(session, analysis)
    plain = _merged_plainly(session, analysis)
    return [(p, p.preview_head) for p in fast], [(p, p.preview_head) for p in plain]


@pytest.mark.parametrize("path", session_files(), ids=lambda p: f"{p.parts[-2]}/{p.name}"[-60:])
def test_merging_equals_the_plain_definition_on_recordings(path):
    fast, plain = _both_merges(path)
    assert fast == plain


SHARED = ["qwen/persist-gate/session.jsonl", "claude/big-outputs/home/.claude/projects/*/*.jsonl",
          "gemini/big-outputs/home/.gemini/tmp/*/chats/*.jsonl"]


@pytest.mark.parametrize("live", [False, True], ids=["file", "live history"])
@pytest.mark.parametrize("pattern", SHARED, ids=lambda pattern: pattern.split("/")[0])
def test_merging_equals_the_plain_definition_when_results_share_a_file(pattern, live, tmp_path):
    """A recording whose later spill paths are rewritten to an earlier one's: several results name one
    file (a copy enriches the first of them), and, read as a live host's history (no file), the copies
    are model-visible results whose key holds their ordinal."""
    recording = next(Path(__file__).resolve().parents[1].joinpath("recordings").glob(pattern))
    data = recording.read_bytes()
    written = list(dict.fromkeys(p.path for p in pointers_for(open_session(recording), None) if p.path))
    assert len(written) >= 2
    copy = tmp_path / recording.name
    shared = 0
    for first, later in zip(written, written[1:]):
        copy.write_bytes(data.replace(json.dumps(later)[1:-1].encode(), json.dumps(first)[1:-1].encode()))
        session = open_session(copy)
        if live:
            session = replace(session, path=None)
        analysis = analyze_tool_result_retention(session.history())
        fast = pointers_for(session, analysis)
        assert [(p, p.preview_head) for p in fast] == [(p, p.preview_head) for p in _merged_plainly(session, analysis)]
        shared += sum(p.path == first for p in fast) >= 2
    assert shared  # some rewrite made two pointers to one file


@settings(max_examples=FUZZ, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=CASES)
def test_merging_equals_the_plain_definition_on_mutated_recordings(tmp_path_factory, case):
    """Duplicated, swapped and damaged lines put copies before, after and without their results."""
    path = case.write(tmp_path_factory.mktemp("merge") / Path(case.source).name)
    try:
        fast, plain = _both_merges(path)
    except SourceError:  # a file the reader refuses has no pointers to merge
        return
    assert fast == plain


# -- the locator: a directory found missing is not looked inside again ------------------------------


NAMES = ["a", "tmp", "tool-results", "x.txt", "y.txt"]
AREAS = ["dump", "dump/tmp", "session-root", "explicit"]
KINDS = ["dir", "file", "link-to-dir", "link-to-file", "dangling", "loop"]


def _build(root: Path, entries) -> None:
    """Entries (path parts, kind) under `root`; one that clashes with an earlier one is left out."""
    for parts, kind in entries:
        path = root.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "dir":
                path.mkdir()
            elif kind == "file":
                path.write_text("x")
            elif kind == "link-to-dir":
                (root / "elsewhere" / "tool-results").mkdir(parents=True, exist_ok=True)
                for held in ("x.txt", "tool-results/x.txt"):
                    (root / "elsewhere" / held).write_text("x")
                path.symlink_to(root / "elsewhere")
            elif kind == "link-to-file":
                path.symlink_to(root / "x.txt")
            elif kind == "dangling":
                path.symlink_to(root / "nothing-here")
            else:
                path.symlink_to(path)
        except OSError:
            continue


def _found_plainly(locator: SpillLocator, written: str) -> tuple:
    """The plain definition of the lookup: every candidate tested with `lexists`, base directories asked
    each time, no memory between pointers."""
    parts = written_parts(written)
    searched = 0
    for bases in (locator.explicit, locator.beside, locator.session_roots):
        bases = [base for base in bases if base.is_dir()]
        for start in range(1, len(parts)):
            suffix = parts[start:]
            if ".." in suffix:
                continue
            for base in bases:
                searched += 1
                if os.path.lexists(base.joinpath(*suffix)):
                    return base.joinpath(*suffix), base, searched
    searched += 1
    return (Path(written), None, searched) if os.path.lexists(written) else (None, None, searched)


def _written_paths(root: Path) -> st.SearchStrategy:
    part = st.sampled_from(NAMES + ["..", ".", "", "\\"])
    relative = st.lists(part, min_size=1, max_size=5).map("/".join)
    return st.one_of(
        relative.map(lambda rest: "/rec/home/" + rest),
        relative.map(lambda rest: "//" + rest),
        relative.map(lambda rest: rest + "/"),
        relative.map(lambda rest: str(root) + "/dump/" + rest),  # as written, on this machine
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map(lambda p: "C:\\Users\\u\\" + "\\".join(p)),
    )


@settings(max_examples=FUZZ, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), entries=st.lists(st.tuples(st.sampled_from(AREAS), st.lists(st.sampled_from(NAMES), min_size=1,
                                                                                  max_size=3), st.sampled_from(KINDS)),
                                        max_size=16))
def test_the_locator_finds_what_testing_every_candidate_finds(tmp_path_factory, data, entries):
    """Files, directories, symlinks to either, dangling links and link loops where the lookup looks
    (beside the dump, in its tmp/, in a session root, in an explicit root), and pointers written every
    way, all resolved by one locator: each is found where testing every candidate finds it, after as
    many candidates."""
    root = tmp_path_factory.mktemp("layout")
    for area in AREAS:
        try:
            (root / area).mkdir(parents=True, exist_ok=True)
        except OSError:  # dump/tmp made a file or a link by the dump's own entries: a base that is no directory
            continue
        _build(root / area, [(parts, kind) for where, parts, kind in entries if where == area])
    written = data.draw(st.lists(_written_paths(root), min_size=1, max_size=12))
    locator = SpillLocator(root / "dump/session.jsonl", spill_roots=[root / "explicit"],
                           session_roots=[root / "session-root", root / "missing-root"])
    for path in written:
        resolution = locator.resolve(pointers_module.SpillPointer("qwen", "test", path))
        found, base, searched = _found_plainly(locator, path)
        assert (resolution.found, resolution.searched) == (found, searched), path
        if base is not None:
            assert resolution.roots[0] == Path(os.path.realpath(base))


def test_the_locator_looks_through_links_and_not_into_files(tmp_path):
    """Named cases: a symlink to a directory is looked through, a file or a dangling link where a
    directory should be hides everything below it, and a missing directory seen once stays skipped
    for the next pointer without changing how many candidates it counts."""
    dump = tmp_path / "dump"
    (tmp_path / "real" / "tool-results").mkdir(parents=True)
    (tmp_path / "real" / "tool-results" / "x.txt").write_text("x")
    dump.mkdir()
    (dump / "linked").symlink_to(tmp_path / "real")
    (dump / "results").symlink_to(tmp_path / "real" / "tool-results")
    (dump / "file").write_text("not a directory")
    (dump / "dangling").symlink_to(tmp_path / "nothing")
    locator = SpillLocator(dump / "session.jsonl")
    cases = ["/rec/linked/tool-results/x.txt", "/rec/file/tool-results/x.txt", "/rec/dangling/tool-results/x.txt",
             "/rec/file/tool-results/y.txt", "/rec/linked/tool-results/y.txt", "/rec/linked/../linked/tool-results/x.txt",
             "/rec/results/x.txt"]
    for written in cases:
        resolution = locator.resolve(pointers_module.SpillPointer("claude", "test", written))
        found, _, searched = _found_plainly(locator, written)
        assert (resolution.found, resolution.searched) == (found, searched), written
    assert locator.resolve(pointers_module.SpillPointer("claude", "test", cases[0])).found == dump / "linked/tool-results/x.txt"
    assert locator.resolve(pointers_module.SpillPointer("claude", "test", cases[-1])).found == dump / "results/x.txt"


@settings(max_examples=FUZZ * 5, deadline=None)
@given(path=st.text(alphabet="/.\\a:b ", max_size=12) | st.text(max_size=8))
def test_written_parts_of_a_posix_path_are_pathlibs(path):
    if "\\" in path and "/" not in path:
        return  # a Windows path: read by PureWindowsPath itself
    pure = PurePosixPath(path)
    assert written_parts(path) == tuple(part for part in pure.parts if part not in (pure.anchor, "/", "\\"))


# -- orphans: a regular file's real path is its directory's real path and its name --------------------


def test_orphans_in_a_linked_spill_directory(tmp_path):
    """A spill root reached through a symlink (so every real path differs from the path found): the
    files the session names are not orphans, a stray file is, a symlink entry is never listed."""
    recording = Path(__file__).resolve().parents[1] / "recordings/qwen/persist-gate"
    real = tmp_path / "real"
    (real / "tool-results").mkdir(parents=True)
    session_path = recording / "session.jsonl"
    session = open_session(session_path)
    analysis = analyze_tool_result_retention(session.history())
    found = pointers_for(session, analysis)
    for pointer in found:
        source = next(recording.glob(f"tmp/**/{pointer.path.rsplit('/', 1)[-1]}"))
        target = real / source.relative_to(recording / "tmp")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    (real / "tool-results" / "stray.txt").write_text("nobody names me")
    (real / "tool-results" / "link.txt").symlink_to(real / "tool-results" / "stray.txt")
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    report = audit_spill(session, found, SpillLocator(tmp_path / "elsewhere/session.jsonl", spill_roots=[linked]))
    named = {os.path.realpath(check.resolution.found) for check in report.checks if check.resolution.exists}
    assert len(named) == len(found) >= 2
    directories = {check.resolution.found.parent for check in report.checks if check.resolution.exists}
    plainly = sorted(entry.path for directory in directories for entry in os.scandir(directory)
                     if entry.is_file(follow_symlinks=False) and os.path.realpath(entry.path) not in named)
    assert list(report.orphans) == plainly == [str(linked / "tool-results" / "stray.txt")]
