"""User key remapping by binding id (posting's scheme): DOCTOR_KEYMAP or ~/.config/doctor/keymap.json."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path


def keymap_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "doctor" / "keymap.json"


def load_keymap(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """{binding id: comma-separated keys}; the env var wins over the file. Bad input is ignored."""
    env = os.environ if env is None else env
    keymap: dict[str, str] = {}
    path = keymap_path(env)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            keymap.update({str(k): str(v) for k, v in data.items()})
    except (OSError, ValueError):
        pass
    for item in env.get("DOCTOR_KEYMAP", "").split(";" if ";" in env.get("DOCTOR_KEYMAP", "") else ","):
        if "=" in item:
            binding_id, keys = item.split("=", 1)
            keymap[binding_id.strip()] = keys.strip()
    return keymap
