"""Where the workplace's shared material sits: `shared/` beside the checkout (CI lays it there too).

DOCTOR_SHARED overrides it.
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DOCTOR_SHARED") or REPO.parent / "shared")
SESSION_FIXTURES = SHARED / "session-fixtures"
SHARED_TOOLS = SHARED / "tools"
