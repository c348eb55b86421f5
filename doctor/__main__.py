"""`python -m doctor` is the `doctor` command."""

import sys

from doctor.cli import main

sys.exit(main())
