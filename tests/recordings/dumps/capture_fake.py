#!/usr/bin/env python3
"""Run one of the scripted model servers (tests/fakes/) and keep every request body it receives byte-exact.

Usage: CAPTURE_FAKE=tests/fakes/gemini.py CAPTURE_DIR=/tmp/cap python3 capture_fake.py PORT SCRIPT [LOG]
(the same arguments as the fake itself, so a recordings/<agent>/record.py can use it through its FAKE_* variable).
Each POST body is written byte-exact to CAPTURE_DIR/<nnn>.json, its URL path to <nnn>.path.
"""
import http.server
import io
import itertools
import os
import runpy
import sys
import threading

FAKE = os.environ["CAPTURE_FAKE"]
OUT = os.environ["CAPTURE_DIR"]
os.makedirs(OUT, exist_ok=True)
_numbers = itertools.count(1)
_lock = threading.Lock()


class CapturingServer(http.server.ThreadingHTTPServer):
    def __init__(self, address, handler):
        class Capture(handler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                with _lock:
                    stem = os.path.join(OUT, "%03d" % next(_numbers))
                with open(stem + ".json", "wb") as f:
                    f.write(raw)
                with open(stem + ".path", "w") as f:
                    f.write(self.path)
                self.rfile = io.BytesIO(raw)
                handler.do_POST(self)

        super().__init__(address, Capture)


http.server.ThreadingHTTPServer = CapturingServer
sys.argv = [FAKE] + sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(FAKE)))  # the fake imports scripted.py from beside it
runpy.run_path(FAKE, run_name="__main__")
