"""Shared test settings: Hypothesis stays out of the repo and runs a fixed budget."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "doctor",
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.load_profile("doctor")

# CI sets this so that a missing Node or Qwen bundle fails instead of skipping.
REQUIRE_REFERENCE = os.environ.get("DOCTOR_REQUIRE_REFERENCE") == "1"
