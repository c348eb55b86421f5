"""doctor's own configuration file: per-tool budget overrides a team wants every time.

`$DOCTOR_CONFIG`, else `<user config dir>/doctor/config.toml` (platformdirs:
`~/.config/doctor/config.toml` on Linux):

    [budgets]                 # per tool, by registry or display name; "inf" = no limit
    mcp__db__query = 100000
    run_shell_command = "inf"

Command-line `--tool-budget` pairs win over the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from doctor.core.budgets import SetBudget, parse_budget_value


class ConfigError(ValueError):
    """The config file exists but cannot be used; the message names the file."""


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("DOCTOR_CONFIG")
    return Path(configured) if configured else Path(platformdirs.user_config_dir("doctor")) / "config.toml"


def load_budget_overrides(path: Path | None = None) -> dict[str, float]:
    """`[budgets]` of the config file, each naming its key and the file (`SetBudget`); {} when there is no file."""
    path = config_path() if path is None else path
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    import tomllib  # only with a file to parse: the status line and hooks call this on every turn

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    budgets = data.get("budgets", {})
    if not isinstance(budgets, dict):
        raise ConfigError(f"{path}: [budgets] must be a table of tool = number")
    overrides: dict[str, float] = {}
    for name, value in budgets.items():
        try:
            overrides[name] = SetBudget(parse_budget_value(str(value)), f"[budgets] {name} in {path}")
        except ValueError:
            raise ConfigError(f"{path}: budget for {name!r} is not a number: {value!r}") from None
    return overrides
