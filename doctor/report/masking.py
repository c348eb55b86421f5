"""Mask obvious secrets in the few places a report shows payload text (`--include-previews`).

A preview is meant to help someone recognise a result, not to leak credentials
into a ticket. This is a best-effort net for the common shapes: provider API keys
(`sk-…`, `AKIA…`, `ghp_…`, Slack `xox…`), bearer tokens, private key blocks and
`password=`-style assignments. The kind stays visible (`sk-…[masked]`) so the
reader still knows what was there.
"""

from __future__ import annotations

import re

MASK = "[masked]"

_PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----.*?(?:-----END \1-----|\Z)", re.DOTALL
)
_TOKEN_SHAPES = re.compile(
    r"\b(?P<kind>sk-(?:ant-|proj-)?|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|glpat-|AIza)"
    r"[A-Za-z0-9_\-]{8,}"
)
_BEARER = re.compile(r"\b(?P<kind>Bearer|Basic|token)\s+[A-Za-z0-9._~+/=\-]{12,}", re.IGNORECASE)
_ASSIGNMENT = re.compile(
    r"(?P<key>\b[\w.\-]*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|token)"
    r"[\"']?\s*[:=]\s*)(?P<quote>[\"']?)(?P<value>[^\s\"'&,;]{3,})",
    re.IGNORECASE,
)


def mask_secrets(text: str) -> str:
    """`text` with credential-shaped substrings replaced by their kind and `[masked]`."""
    text = _PRIVATE_KEY.sub(lambda m: f"-----BEGIN {m.group(1)}----- {MASK}", text)
    text = _TOKEN_SHAPES.sub(lambda m: f"{m.group('kind')}…{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group('kind')} {MASK}", text)
    return _ASSIGNMENT.sub(lambda m: f"{m.group('key')}{m.group('quote')}{MASK}", text)
