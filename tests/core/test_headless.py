"""The headless layers import neither textual nor rich (checked in a fresh interpreter)."""

import subprocess
import sys

HEADLESS = [
    "doctor.core.analysis", "doctor.core.budgets", "doctor.core.estimator", "doctor.core.jsvalues",
    "doctor.core.parts", "doctor.core.retention", "doctor.core.sentinels", "doctor.core.settings",
    "doctor.core.ui_history", "doctor.spill.pager", "doctor.spill.audit", "doctor.spill.pointers",
    "doctor.sources.registry", "doctor.process", "doctor.report.model", "doctor.live", "doctor.assemble",
]


def test_headless_modules_do_not_import_ui_libraries():
    code = (
        "import sys, importlib\n"
        f"for name in {HEADLESS!r}: importlib.import_module(name)\n"
        "from doctor.sources.registry import available_readers; available_readers()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
