"""The optional C module `doctor.core._rawjson`, or None: the one place that honours DOCTOR_PURE_PYTHON.

setup.py builds the module only where a compiler exists, so every caller keeps an exact
pure-Python path; DOCTOR_PURE_PYTHON=1 forces that path so tests can run both and compare.
"""

from __future__ import annotations

import os


def compiled_module():
    """`doctor.core._rawjson` when it is built and not switched off, else None."""
    if os.environ.get("DOCTOR_PURE_PYTHON"):
        return None
    try:
        from doctor.core import _rawjson
    except ImportError:
        return None
    return _rawjson
