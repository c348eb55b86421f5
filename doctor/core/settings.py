"""Qwen Code settings that change the numbers, read and merged as Qwen does.

Scopes from lowest to highest priority: system defaults, user
(`$QWEN_HOME/settings.json`, default `~/.qwen`), workspace
(`<project>/.qwen/settings.json`; Qwen reads it only for trusted folders, doctor
assumes trust and says so), system (`QWEN_CODE_SYSTEM_SETTINGS_PATH` or
`/etc/qwen-code/settings.json`). Objects merge deeply; later scopes win.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from msgspec import Struct, field

from doctor.core.budgets import QwenLimits
from doctor.core.estimator import resolve_image_token_estimate


class SettingsError(ValueError):
    """A settings file exists but cannot be used; the message names the file."""


class QwenSettings(Struct, frozen=True):
    """The merged settings and the files they came from."""

    merged: Mapping = field(default_factory=dict)
    files: tuple[Path, ...] = ()

    @property
    def tools(self) -> Mapping:
        tools = self.merged.get("tools")
        return tools if isinstance(tools, Mapping) else {}

    @property
    def limits(self) -> QwenLimits:
        return QwenLimits.from_settings(self.tools)

    @property
    def mcp_server_names(self) -> frozenset[str]:
        servers = self.merged.get("mcpServers")
        return frozenset(servers) if isinstance(servers, Mapping) else frozenset()

    @property
    def image_token_estimate_setting(self) -> object:
        model = self.merged.get("model")
        compression = model.get("chatCompression") if isinstance(model, Mapping) else None
        return compression.get("imageTokenEstimate") if isinstance(compression, Mapping) else None

    def image_token_estimate(self, env: Mapping[str, str] | None = None) -> float:
        return resolve_image_token_estimate(self.image_token_estimate_setting, env)


def qwen_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("QWEN_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".qwen"


def default_settings_files(project_dir: Path | None, env: Mapping[str, str] | None = None) -> list[Path]:
    """Candidate files, lowest priority first."""
    env = os.environ if env is None else env
    system = Path(env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or "/etc/qwen-code/settings.json")
    defaults = Path(env.get("QWEN_CODE_SYSTEM_DEFAULTS_PATH") or system.with_name("system-defaults.json"))
    files = [defaults, qwen_home(env) / "settings.json"]
    if project_dir is not None:
        files.append(Path(project_dir) / ".qwen" / "settings.json")
    files.append(system)
    return files


def deep_merge(base: Mapping, override: Mapping) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_settings_file(path: Path) -> Mapping:
    """One settings file, read as the agents read theirs: comments stripped, then JSON.parse
    (doctor/core/jsonc.py); Claude Code's own settings have none, and lose nothing by it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read settings: {exc}") from exc
    try:
        data = json.loads(text, parse_constant=_not_json)  # plain JSON, the usual case: no tokenizer to load
    except ValueError:
        from doctor.core import jsonc  # comments: 4 ms to load, so only for a file that needs it

        try:
            data = jsonc.parse(text)[0]
        except ValueError as exc:  # "line N: what"
            line, _, what = str(exc).partition(": ")
            raise SettingsError(f"{path}:{line.removeprefix('line ')}: invalid JSON in settings: {what}") from None
    if not isinstance(data, Mapping):
        raise SettingsError(f"{path}: settings must be a JSON object")
    return data


def _not_json(constant: str):
    """NaN and Infinity: Python's json takes them, JSON.parse does not (jsonc.parse then says where)."""
    raise ValueError(constant)


def load_qwen_settings(
    project_dir: Path | None = None,
    *,
    files: list[Path] | None = None,
    extra_files: tuple[Path, ...] = (),
    env: Mapping[str, str] | None = None,
) -> QwenSettings:
    """Merge the settings files that exist; `extra_files` (e.g. `--settings`) win over all."""
    candidates = list(files) if files is not None else default_settings_files(project_dir, env)
    candidates.extend(extra_files)
    merged: dict = {}
    used: list[Path] = []
    for path in candidates:
        if path in extra_files and not path.exists():
            raise SettingsError(f"{path}: settings file not found")
        if not path.is_file():
            continue
        merged = deep_merge(merged, read_settings_file(path))
        used.append(path)
    return QwenSettings(merged=merged, files=tuple(used))
