"""Only the optional C accelerator lives here; everything else is in pyproject.toml.

`optional=True`: without a compiler the build skips it and doctor uses the exact
pure-Python path (doctor.core.rawjson), so the README's install works anywhere.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("doctor.core._rawjson", ["doctor/core/_rawjson.c"], optional=True)])
