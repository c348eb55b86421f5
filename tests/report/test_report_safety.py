"""Reports are paste-safe: no payload text unless asked, secrets masked when asked, everything inert.

Driven through `doctor memory` on a real Qwen recording whose largest result (and
its tool's name) was replaced by hostile text: credentials, terminal escapes,
rich markup, HTML and a bidirectional override.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_support import (
    HOSTILE_PAYLOAD,
    HOSTILE_TOOL,
    PAYLOAD_MARKER,
    SECRETS,
    hostile_session,
    run_cli,
)

from doctor.report.inert import inert, inert_json, inert_json_bytes
from doctor.report.masking import mask_secrets

FORMATS = ("text", "json", "markdown", "html")


@pytest.fixture
def hostile(tmp_path):
    return hostile_session(tmp_path)


def _render(capsys, path, fmt: str, *extra: str) -> str:
    code, out, err = run_cli(capsys, "memory", path, "--format", fmt, *extra)
    assert code == 0, err
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_payload_text_by_default(capsys, hostile, fmt: str) -> None:
    out = _render(capsys, hostile, fmt)
    assert PAYLOAD_MARKER not in out
    for secret in SECRETS.values():
        assert secret not in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_previews_show_the_payload_with_secrets_masked(capsys, hostile, fmt: str) -> None:
    out = _render(capsys, hostile, fmt, "--include-previews")
    assert PAYLOAD_MARKER in out
    for kind, secret in SECRETS.items():
        assert secret not in out, kind
        assert secret[:12] not in out, kind  # not even the start of one
    assert "[masked]" in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_is_inert(capsys, hostile, fmt: str) -> None:
    out = _render(capsys, hostile, fmt, "--include-previews")
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    if fmt == "json":  # data kept exact, as JSON escapes a terminal prints as text
        tools = [tool["tool"] for tool in json.loads(out)["retention"]["perTool"]]
        assert HOSTILE_TOOL in tools and "evil\\u001b[31m" in out
        return
    assert "\\u202e" in out  # the override is shown, not obeyed
    if fmt == "html":
        assert "<script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
        assert "evil&lt;b&gt;[bold]tool|x" in out
    elif fmt == "text":
        assert "[bold red]markup[/bold red]" in out  # rich markup stays literal text
        assert "evil<b>[bold]tool|x" in out


def test_previews_are_bounded(capsys, hostile) -> None:
    report = json.loads(_render(capsys, hostile, "json", "--include-previews", "--top", "3"))
    previews = report["previews"]
    assert len(previews) == 3
    assert all(len(preview["text"]) <= 400 + 6 * 10 for preview in previews)
    hostile_preview = next(p for p in previews if PAYLOAD_MARKER in p["text"])
    assert hostile_preview["truncated"] and "x" * 100 in hostile_preview["text"]


def test_masking_shapes() -> None:
    masked = mask_secrets(HOSTILE_PAYLOAD)
    for secret in SECRETS.values():
        assert secret not in masked
    assert "OPENAI_API_KEY=[masked]" in masked and "Authorization: Bearer [masked]" in masked
    assert mask_secrets("500 tokens, a token budget, password reset docs") == "500 tokens, a token budget, password reset docs"


def test_json_escapes_what_json_dumps_leaves_raw() -> None:
    raw = json.dumps({"name": "a\x9b31mb\u202ec\x7f"}, ensure_ascii=False)
    assert "\x9b" in raw and "\u202e" in raw
    safe = inert_json(raw)
    assert "\x9b" not in safe and "\u202e" not in safe and "\x7f" not in safe
    assert json.loads(safe) == json.loads(raw)


def test_inert_keeps_text_and_shows_controls() -> None:
    assert inert("a\x1b[1mb\x1b[0m\tc\nd") == "a b\tc\nd".replace(" ", "")
    assert inert("bell\x07 nul\x00 del\x7f") == "bell\\x07 nul\\x00 del\\x7f"
    assert inert("\u202eevil") == "\\u202eevil"


@pytest.mark.parametrize("fmt", FORMATS)
def test_paths_inside_previews_follow_paths_style(capsys, fmt: str) -> None:
    """Qwen's stubs name the spill file by absolute path: --paths short (the default) shortens it there too."""
    from pathlib import Path

    recording = Path(__file__).resolve().parents[1] / "recordings" / "qwen" / "batch-budget" / "session.jsonl"
    written = json.loads(_render(capsys, recording, "json", "--paths", "full"))["spill"]["pointers"][0]["path"]
    assert written.startswith("/tmp/qrec/batch-budget/home/.qwen/tmp/")  # where the real client wrote it
    full = _render(capsys, recording, fmt, "--include-previews", "--paths", "full")
    short = _render(capsys, recording, fmt, "--include-previews")
    hashed = _render(capsys, recording, fmt, "--include-previews", "--paths", "hash")
    assert written in full
    for out in (short, hashed):
        assert "/tmp/qrec/" not in out and "batch-budget/home" not in out
    shortened = "/…/tool-results/" + written.rsplit("/", 1)[1]
    assert shortened in short and "sha256:" in hashed


@given(st.text(alphabet=st.one_of(st.characters(max_codepoint=0x2FF), st.characters(min_codepoint=0x2000,
                                                                                         max_codepoint=0x2100),
                                  st.sampled_from("\x9b\u202e\u2066\x7f\x00\u00b7\u2026\U0001F600"))))
def test_json_bytes_are_made_inert_exactly_as_the_text(text) -> None:
    """`inert_json_bytes` (what `doctor whatif --json` prints) gives `inert_json`'s text, in UTF-8."""
    assert inert_json_bytes(text.encode("utf-8", "surrogatepass")) == inert_json(text).encode("utf-8", "surrogatepass")
