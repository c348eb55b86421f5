import pytest


@pytest.fixture(autouse=True)
def clean_home(tmp_path, monkeypatch):
    """Budgets come from Qwen's defaults, not this machine's settings; discovery sees an empty home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("QWEN_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "DOCTOR_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return home
