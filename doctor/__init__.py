"""doctor: diagnostics for coding-agent sessions.

`doctor memory` shows what a session keeps in its history, what it costs and where
the big tool outputs went, with Qwen Code 0.24.4's own numbers as the reference.
`doctor.attach(history)` does the same inside a running Python agent host.
"""

__version__ = "0.1.0"

__all__ = ["attach", "__version__"]


def __getattr__(name: str):
    # Imported lazily so `import doctor` stays cheap for hosts that never call it.
    if name == "attach":
        from doctor.live import attach

        return attach
    raise AttributeError(f"module 'doctor' has no attribute {name!r}")
