"""Support triage over many sessions: `doctor scan`.

Each input file is one independent job (`job.scan_file`: a file in, plain rows out, no
payload text), run by an engine (`engines`: a local process pool, or Dask) and written
by the main process into an embedded DuckDB database (`store`), finished files in group commits.
The answers, charts and metric exports read that database. DuckDB, Dask and
OpenTelemetry come from the optional `[triage]` extra; `doctor memory` imports none
of this package.
"""
