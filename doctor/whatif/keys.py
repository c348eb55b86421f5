"""`--set KEY=VALUE` and `--sweep KEY=A..B[:STEP]` as a user writes them, checked against the agent's keys.

KEY is the agent's own name for a limit; VALUE `default` means "as if the key were not set"; an
unknown key is refused with the list of keys that agent has. Values are read by the key's own
`parse` (the client's reading: Qwen takes any number and treats ≤ 0 as "no limit").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from doctor.whatif.model import SettingKey

DEFAULT = "default"
MAX_SWEEP_VALUES = 200


class SettingError(ValueError):
    """A `--set`/`--sweep` the agent does not have, or a value it cannot read; one line, for the user."""


def key_named(name: str, keys: Sequence[SettingKey], client: str) -> SettingKey:
    for key in keys:
        if key.name == name:
            return key
    known = ", ".join(key.name for key in keys)
    raise SettingError(f"{client} has no limit {name!r}; its keys are: {known}")


def parse_value(key: SettingKey, text: str) -> float | None:
    """A VALUE for `key`: None for `default`, else the key's own reading of it."""
    if text.strip().lower() == DEFAULT:
        return None
    try:
        return key.parse(text)
    except ValueError as exc:
        raise SettingError(f"{key.name}: {exc}") from None


def parse_sets(pairs: Iterable[str], keys: Sequence[SettingKey], client: str) -> dict[str, float | None]:
    """`KEY=VALUE` pairs, in order (a later one for the same key wins)."""
    overrides: dict[str, float | None] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise SettingError(f"expected KEY=VALUE, got {pair!r}")
        key = key_named(name.strip(), keys, client)
        overrides[key.name] = parse_value(key, value)
    return overrides


def parse_sweep(text: str, keys: Sequence[SettingKey], client: str) -> tuple[SettingKey, list[float | None]]:
    """`KEY=A..B[:STEP]` (STEP: (B-A)/19 rounded, 20 values, when omitted) or `KEY=V1,V2,…`."""
    name, sep, spec = text.partition("=")
    if not sep or not spec.strip():
        raise SettingError(f"expected KEY=A..B[:STEP] or KEY=V1,V2,…, got {text!r}")
    key = key_named(name.strip(), keys, client)
    if ".." in spec:
        span, _, step_text = spec.partition(":")
        low_text, _, high_text = span.partition("..")
        low, high = parse_value(key, low_text), parse_value(key, high_text)
        if low is None or high is None or not (low == low and high == high) or high < low:
            raise SettingError(f"{key.name}: a range needs two numbers, low..high, got {spec!r}")
        step = parse_value(key, step_text) if step_text.strip() else max(1, round((high - low) / 19))
        if step is None or step <= 0:
            raise SettingError(f"{key.name}: the step must be a positive number, got {step_text!r}")
        count = int((high - low) // step) + 1
        if count > MAX_SWEEP_VALUES:
            raise SettingError(f"{key.name}: {count} values is more than {MAX_SWEEP_VALUES}; use a larger step")
        values: list[float | None] = [low + step * i for i in range(count)]
        return key, values
    values = [parse_value(key, item) for item in spec.split(",") if item.strip()]
    if not values:
        raise SettingError(f"{key.name}: no values in {spec!r}")
    if len(values) > MAX_SWEEP_VALUES:
        raise SettingError(f"{key.name}: {len(values)} values is more than {MAX_SWEEP_VALUES}")
    return key, values
