"""Codex CLI 0.171.0's limit on what a tool output may put in the model's context.

Codex truncates every function/custom tool output it records in history to the
model's `truncation_policy` (head and tail kept, `…N tokens truncated…` /
`…N chars truncated…` between), whatever the tool: the catalog built into the
0.171.0 binary gives every listed model `{"mode": "tokens", "limit": 10000}`;
a model not in the catalog (a custom provider's) gets the fallback
`TruncationPolicyConfig::bytes(10_000)` (from Codex's source: the Rust constant
cannot be read back from the binary, but the real 0.171.0 client's cuts in
tests/recordings/codex/{big-outputs,raised-limit} keep exactly 10,000 and
50,000 × 4 bytes, which tests/cli/test_agent_limit_recordings.py checks). `tool_output_token_limit` in
`$CODEX_HOME/config.toml` (default `~/.codex`) replaces the limit, in tokens, or
as tokens × 4 bytes for a bytes policy (`approx_bytes_for_tokens`). Codex
estimates 4 bytes a token, and so does doctor here, on the output's UTF-8 bytes
(`AgentRules.unit`: every limit below is in bytes, and the oversized rule compares
each output's bytes, Codex's own measure). The `exec_command` header lines (Chunk
ID, wall time, exit code, original token count, truncation warning) sit outside
the limit: doctor allows 1,000 bytes for them.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from doctor.core.agent_homes import CODEX, agent_homes
from doctor.core.agent_rules.model import BYTES, TOKENS, AgentBudget, AgentRules, ToolRule, positive_int
from doctor.core.sentinels import IN_TOOL_TRUNCATION
from doctor.core.settings import SettingsError

AGENT = CODEX
CLIENT = "Codex CLI"
VERSION = "0.171.0"
DEFAULT = f"built-in default of {CLIENT} {VERSION}"
BYTES_PER_TOKEN = 4
CATALOG_TOKEN_LIMIT = 10_000
FALLBACK_BYTE_LIMIT = 10_000
HEADER_ALLOWANCE = 1_000
# Codex's words for the one layer it has: the output cut in place to the truncation policy.
LAYER_NAMES = {IN_TOOL_TRUNCATION: "truncated to the truncation policy"}
# Model slugs of the catalog embedded in the 0.171.0 binary (all "tokens", 10,000).
CATALOG_MODELS = frozenset({
    "gpt-6.2-sol", "gpt-6.2-astra", "gpt-6-astra", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-sol", "gpt-6-luna",
    "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-daybreak-blue-latest", "gpt-daybreak-red-latest",
    "gpt-5.5", "codex-auto-review",
})
RULE = ("A result is oversized when the model got more than the model's truncation policy lets through "
        "(10,000 tokens ≈ 40,000 bytes for catalog models, 10,000 bytes for others, or "
        "tool_output_token_limit) plus 1,000 bytes of exec header, and Codex did not truncate it.")


def read_config(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read config: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: invalid TOML in config: {exc}") from exc


def load(model: str | None, env: Mapping[str, str], extra_files: tuple[Path, ...] = (),
         overrides: Mapping[str, float] | None = None, use_default_files: bool = True) -> AgentRules:
    limit_tokens, where, used = None, None, []
    for path in ([agent_homes(env)[CODEX] / "config.toml"] if use_default_files else []) + list(extra_files):
        if not path.is_file():
            continue
        config = read_config(path)
        used.append(str(path))
        value = positive_int(config.get("tool_output_token_limit"))
        if value is not None:
            limit_tokens, where = value, f"tool_output_token_limit in {path}"
    in_catalog = model in CATALOG_MODELS
    policy = f"model {model or '(unknown)'}: " + ("catalog policy tokens 10,000" if in_catalog
                                                   else "not in the catalog, fallback policy bytes 10,000")
    if limit_tokens is not None:
        budget = (AgentBudget(limit_tokens, TOKENS, limit_tokens * BYTES_PER_TOKEN, "settings", f"{where} ({policy})",
                              "× 4 bytes a token, Codex's own estimate") if in_catalog else
                  AgentBudget(limit_tokens * BYTES_PER_TOKEN, BYTES, limit_tokens * BYTES_PER_TOKEN, "settings",
                              f"{where} × 4 bytes ({policy})"))
    elif in_catalog:
        budget = AgentBudget(CATALOG_TOKEN_LIMIT, TOKENS, CATALOG_TOKEN_LIMIT * BYTES_PER_TOKEN, "default",
                             f"{DEFAULT}: {policy}", "× 4 bytes a token, Codex's own estimate")
    else:
        budget = AgentBudget(FALLBACK_BYTE_LIMIT, BYTES, FALLBACK_BYTE_LIMIT, "default", f"{DEFAULT}: {policy}")
    return AgentRules(AGENT, CLIENT, VERSION, (), ToolRule("every tool", budget), RULE, HEADER_ALLOWANCE,
                      dict(overrides or {}), (), tuple(used), layer_names=LAYER_NAMES, unit=BYTES)
