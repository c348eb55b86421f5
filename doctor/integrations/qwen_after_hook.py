"""What Qwen Code 0.24.4 still does to a tool result after its `PostToolUse` hook ran.

Qwen hands the hook `llmContent` as the tool returned it (recorded with the real client:
tests/recordings/qwen/hook-payloads; a grep with truncation off is handed its 41,212 chars, the
model gets 20,488), then its scheduler goes on (chunk-DPEB6S2R.js:60742–60960, then
`finalizeToolResponses` once the batch is done):
1. the persistence gate: a result longer than `tools.truncateToolOutputThreshold` + 3,000 becomes a
   `<persisted-output>` stub (not the shell's, which bounds itself, nor read_file's and the other
   exempt tools');
2. per-tool truncation: the tool's `maxOutputChars` by chars (grep's 20,000 stays with the threshold
   off), or the threshold and `tools.truncateToolOutputLines` for a tool that declares none;
3. the hook's `additionalContext` appended after two newlines, and a combined pass at twice the
   tool's base threshold when that makes the text longer. Steps 1–2 leave an uncut text within that
   base, so a sentence of a few hundred chars crosses twice the base only when the base is smaller
   than the sentence, where no result is oversized: the alarm's own sentence never changes its verdict.
   (A conditional rule or skill reminder Qwen appends there is not known to the hook.)
4. the batch budget (`tools.toolOutputBatchBudget`, 200,000 by default) shared by one turn's parallel
   calls: the hook sees one result, so it takes it alone, the most this result can keep. A longer one
   is replaced by "Tool output truncated. Persisted tool-output artifact: <tool-results/<call id>.txt>"
   and a preview of the budget's size.
The arithmetic is doctor.whatif's port of Qwen's (`qwen_layers`), on the text in UTF-16 unit form, so
lengths count as Qwen's do.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from doctor.core.budgets import SHELL_TOOL, QwenLimits, canonical_tool_name
from doctor.core.settings import qwen_home
from doctor.whatif import qwen_layers as layers
from doctor.whatif.jsstring import from_units, to_units


@dataclass(frozen=True)
class Delivered:
    """The text the model gets and the file Qwen's notice in it names (None: none, or not known)."""

    text: str
    spill: str | None


def temp_dir(cwd: Path | None, env: Mapping[str, str] | None = None) -> str:
    """`<QWEN_RUNTIME_DIR or QWEN_HOME or ~/.qwen>/tmp/<sha256 of the project>`, where Qwen writes its spills."""
    env = os.environ if env is None else env
    runtime = env.get("QWEN_RUNTIME_DIR")
    base = Path(runtime) if runtime and os.path.isabs(runtime) else qwen_home(env)
    return str(base / "tmp" / hashlib.sha256(str(cwd or "").encode()).hexdigest())


def delivered(tool: str, text: str, call_id: str | None, limits: QwenLimits, spill_dir: str) -> Delivered:
    """What the model gets of `text`, the result of `tool` the hook was handed (steps 1, 2 and 4)."""
    canonical = canonical_tool_name(tool)
    units = to_units(text)
    files: list[str] | None = None  # the files Qwen wrote the whole to so far (None: none yet)
    spill: str | None = None
    if canonical != SHELL_TOOL and canonical not in layers.GATE_EXEMPT and units and not layers.is_already_truncated(units) \
            and len(units) > limits.threshold + layers.GATE_HEADROOM:
        units, spill = layers.persist_and_truncate(call_id or "", units, f"{spill_dir}/tool-results",
                                                   layers.PersistBudget())
        files = [spill] if spill else []
    # A cut saves the whole to a file named with 12 random hex digits: one of the same length stands in for it.
    cut, output_file = layers.truncate_llm_content(tool, canonical, units, limits,
                                                   f"{spill_dir}/{tool.rsplit('/', 1)[-1]}_{'0' * 12}.output")
    if cut != units:
        units, files, spill = cut, [output_file] if output_file else [], None  # that name is not known
    budget = limits.batch_budget
    if math.isfinite(budget) and budget > 0 and len(units) > budget:
        if files is None:
            _, spill = layers.persist_and_truncate(call_id or "", units, f"{spill_dir}/tool-results",
                                                   layers.PersistBudget())
            files = [spill] if spill else []
        units = layers.fit_text(units, int(budget), files)
    return Delivered(from_units(units), spill)
