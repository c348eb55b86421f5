"""Where the public session files copied into this repo live (provenance: tests/fixtures/public/README.md)."""

from pathlib import Path

PUBLIC_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "public"
