"""doctor: diagnostics for coding-agent sessions.

`doctor memory` shows what a session keeps in its history, what it costs and where
the big tool outputs went, with Qwen Code 0.24.4's own numbers as the reference.
"""

__version__ = "0.1.0"
