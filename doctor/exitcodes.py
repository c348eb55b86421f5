"""Exit codes shared by every `doctor` command, so scripts can tell outcomes apart.

0  the report rendered and nothing was flagged (or no check was asked for);
1  a check failed: the regression alarm fired or the audit found a problem;
2  usage error, or input that could not be read at all (missing file, unknown format);
3  the report rendered, but part of the input was skipped (invalid lines, unreadable files);
4  internal error: doctor hit a bug (one line on stderr says where; `--debug` shows the traceback);
5  refused: input that asks doctor to do what it never does for input (a `scan --query` that writes, reads
   files or the network, or is more than one statement; a triage database with views or macros);
130 interrupted (Ctrl-C).
"""

OK = 0
FINDINGS = 1
USAGE_OR_INPUT = 2
PARTIAL_INPUT = 3
INTERNAL_ERROR = 4
REFUSED = 5
INTERRUPTED = 130
