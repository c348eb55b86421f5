"""Gemini CLI 0.61.0's output masking (`ToolOutputMaskingService.mask`), replayed over a session's results.

Before every request the CLI walks the function responses already in the history from the newest back,
adding up their estimated tokens (`estimateTokenCountSync`: name and `JSON.stringify(response)` lengths
÷ 4); past `protectionThresholdTokens` every older one is prunable, and once the prunable ones reach
`minPrunableThresholdTokens` each is replaced by a `<tool_output_masked>` preview of a file. The file's
name ends in `Math.random().toString(36).substring(7)`, so a result masked only under the replayed
settings has a length known to within that suffix (unknown, bounded); one masked in the session and
under the replayed settings from the same text keeps the session's text.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring

from doctor.core.jsvalues import js_len
from doctor.core.sentinels import PERSISTED_STUB
from doctor.whatif.model import Outcome, ReplayInput, unknown
from doctor.whatif.token_sums import TokenSums
from doctor.whatif.utf16 import js_head, js_tail

PROTECTION = "contextManagement.tools.outputMasking.protectionThresholdTokens"
MIN_PRUNABLE = "contextManagement.tools.outputMasking.minPrunableThresholdTokens"
PROTECT_LATEST = "contextManagement.tools.outputMasking.protectLatestTurn"
OPEN_TAG = "<tool_output_masked>"
CLOSE = "\n</tool_output_masked>"
AVAILABLE_AT = re.compile(r"\n\nOutput too large\. Full output available at: (.*)\n</tool_output_masked>$")
EXEMPT_TOOLS = frozenset({"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"})
SHELL_TOOL = "run_shell_command"
CHARS_PER_TOKEN = 4
RANDOM_SUFFIX = (0, 16)  # chars `Math.random().toString(36).substring(7)` may leave
_RESPONSE_FRAME = len('{"output":}')
MASKED, UNDECIDED, KEPT = "masked", "undecided", "kept"  # what masking would do to one result (`_judge`)
SECTIONS = re.compile(r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ", re.M)


@dataclass(frozen=True, slots=True)
class Config:
    protection: float = 50_000
    min_prunable: float = 30_000
    protect_latest: bool = True

    @classmethod
    def from_settings(cls, settings: Mapping[str, float]) -> Config:
        return cls(settings.get(PROTECTION, 50_000), settings.get(MIN_PRUNABLE, 30_000),
                   bool(settings.get(PROTECT_LATEST, 1.0)))


def masked_file(text: str) -> str | None:
    """The file a masking notice points to."""
    found = AVAILABLE_AT.search(text[-4096:])
    return found.group(1) if found else None


def estimate(tool: str, output: str) -> float:
    """`estimateFunctionResponseTokens` of a `{output}` response, before `estimateTokenCountSync` floors it.

    The response's JSON is `{"output":` + the quoted output + `}`: the output is quoted by the function
    `json.dumps(..., ensure_ascii=False)` quotes it with, without building the dict's JSON around it (a
    replay estimates every result at every sampled setting)."""
    return (js_len(tool) + _RESPONSE_FRAME + js_len(encode_basestring(output))) / CHARS_PER_TOKEN


def mask(inputs: Sequence[ReplayInput], outcomes: Sequence[Outcome], config: Config) -> list[Outcome]:
    """`outcomes` (each result as the truncation layer left it) after the masking that runs before each
    request; a result whose masking depends on something unknown becomes unknown."""
    texts = [outcome.text for outcome in outcomes]
    masked, undecided = mask_decisions(inputs, texts, config)
    result = []
    for i, (one, outcome) in enumerate(zip(inputs, outcomes)):
        if outcome.text is None:
            result.append(outcome)  # unknown already, for its own reason
        elif undecided[i]:
            result.append(unknown("output masking may have masked it: an older result's size is unknown",
                                  high=js_len(outcome.text)))
        elif not masked[i]:
            result.append(outcome)
        elif one.recorded.startswith(OPEN_TAG) and outcome.text is not None and outcome.text == one.facts.get("premask"):
            result.append(Outcome(one.recorded, PERSISTED_STUB))  # masked in the session, from the same text
        else:
            size = _masked_size(one.tool, outcome.text, one)
            result.append(unknown("output masking would mask it; the file it names ends in a random suffix",
                                  size + RANDOM_SUFFIX[0], size + RANDOM_SUFFIX[1], PERSISTED_STUB))
    return result


def mask_decisions(inputs: Sequence[ReplayInput], texts: Sequence[str | None], config: Config) -> tuple[list, list]:
    """(masked, undecided) per result after the masking pass before every request.

    The CLI walks the whole history before each request, which replayed as written costs requests ×
    results estimates (minutes of a scan's CPU on one long Gemini session). What a pass does depends
    only on a few sums, so this keeps them instead, with the same outcome (tests/whatif/test_gemini_masking.py
    holds the walk as the CLI writes it and compares the two):
    - a result's tokens, and whether masking would shrink it (`_judge`), never change within a replay,
      so each is computed once, and a result judged and left unmasked is judged the same again later;
    - the results a pass may mask are every candidate at or before the newest one whose suffix sum of
      tokens passes `protection` (found in a prefix-sum tree, `TokenSums.last_over`); only the masked
      ones leave the sums;
    - a candidate of unknown size stops every later pass before it masks anything; the last pass then
      leaves every unmasked result older than the newest such candidate undecided (earlier such passes
      mark a subset of what the last one marks)."""
    count = len(inputs)
    masked, undecided = [False] * count, [False] * count
    tokens = [None] * count
    sums = TokenSums(count)
    waiting: list[int] = []  # candidates scanned and not judged yet, ascending
    newest_unknown = -1
    order = sorted(range(count), key=lambda i: inputs[i].facts.get("content_index", 0))
    scanned = 0
    for pending in sorted({one.facts.get("content_index", 0) for one in inputs}):
        last = pending - 2 if config.protect_latest else pending - 1
        while scanned < count and inputs[order[scanned]].facts.get("content_index", 0) <= last:
            i = order[scanned]
            scanned += 1
            one = inputs[i]
            if one.tool in EXEMPT_TOOLS or one.field != "output":
                continue
            if texts[i] is None:
                newest_unknown = max(newest_unknown, i)
                continue
            tokens[i] = math.floor(estimate(one.tool, texts[i]))
            sums.add(i, tokens[i])
            bisect.insort(waiting, i)
        if newest_unknown >= 0:
            continue
        boundary = sums.last_over(config.protection)
        if boundary is None or sums.up_to(boundary) < config.min_prunable:
            continue
        judged = bisect.bisect_right(waiting, boundary)
        for i in waiting[:judged]:
            verdict = _judge(inputs[i], texts[i], tokens[i])
            if verdict is MASKED:
                masked[i] = True
                sums.add(i, -tokens[i])
            elif verdict is UNDECIDED:
                undecided[i] = True
        del waiting[:judged]
    if newest_unknown >= 0:
        undecided[newest_unknown] = True
        for j in order[:scanned]:
            if j < newest_unknown and not masked[j]:
                undecided[j] = True
    return masked, undecided


def _judge(one: ReplayInput, text: str, tokens: int) -> str:
    """Whether the masked snippet is smaller than the result, whatever the file name's random part."""
    low = math.floor(estimate(one.tool, snippet(one.tool, text, one, RANDOM_SUFFIX[0])))
    high = math.floor(estimate(one.tool, snippet(one.tool, text, one, RANDOM_SUFFIX[1])))
    if tokens - high > 0:
        return MASKED
    return UNDECIDED if tokens - low > 0 else KEPT


def _masked_size(tool: str, text: str | None, one: ReplayInput) -> int:
    """The snippet's length without the file name's random suffix (0 for an unknown text)."""
    return 0 if text is None else js_len(snippet(tool, text, one, 0))


def snippet(tool: str, text: str, one: ReplayInput, suffix: int) -> str:
    """`formatMaskedSnippet` for this result, its file name's random part `suffix` chars long."""
    preview = shell_preview(text) if tool == SHELL_TOOL else _json_preview(text)
    name = f"{_safe(tool).lower()}_{_safe(one.call_id or '').lower()}_{'a' * suffix}.txt"
    path = f"{one.facts.get('folder', '')}/session-{_safe(one.facts.get('session_id', ''))}/{name}"
    return f"{OPEN_TAG}\n{preview}\n\nOutput too large. Full output available at: {path}{CLOSE}"


def _safe(part: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", part)


def _json_preview(text: str) -> str:
    content = '{\n  "output": ' + json.dumps(text, ensure_ascii=False) + "\n}"
    if js_len(content) <= 500:
        return content
    return f"{js_head(content, 250)}\n... [TRUNCATED] ...\n{js_tail(content, 250)}"


def shell_preview(content: str) -> str:
    """`formatShellPreview` of a `{output}` response."""
    parts = SECTIONS.split(content)
    if len(parts) < 3:
        return _simple_preview(content)
    previews = []
    if parts[0].strip():
        previews.append(_simple_preview(parts[0].strip()))
    for at in range(1, len(parts), 2):
        name, section = parts[at], (parts[at + 1].strip() if at + 1 < len(parts) else "")
        previews.append(f"Output: {_simple_preview(section)}" if name == "Output" else f"{name}: {section}")
    return "\n".join(previews)


def _simple_preview(content: str) -> str:
    lines = content.split("\n")
    if len(lines) <= 20:
        return content
    return "\n".join(lines[:10]) + f"\n\n... [{len(lines) - 20} lines omitted] ...\n\n" + "\n".join(lines[-10:])
