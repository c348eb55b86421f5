"""What the hostile-input tests share: a second local account for the attacks that need one.

Some findings need another user on the same machine (a planted `/tmp/<hash>` symlink, a cache
folder someone else created first, a file they own). When the tests run as root (CI's fresh
machine) the account is created once (`useradd`); otherwise the tests that need it skip and say so.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import pytest

OTHER_USER = "doctor-attacker"


@dataclass(frozen=True)
class OtherUser:
    name: str
    uid: int
    gid: int

    def run(self, action: Callable[[], None]) -> int:
        """Run `action` in a child process as this user; its exit status (0: returned, 1: raised)."""
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child
            status = 1
            try:
                os.setgroups([])
                os.setgid(self.gid)
                os.setuid(self.uid)
                action()
                status = 0
            finally:
                os._exit(status)
        _, status = os.waitpid(child, 0)
        return os.waitstatus_to_exitcode(status)

    def own(self, path: os.PathLike | str) -> None:
        """Make `path` this user's (as if they had created it), without following a symlink."""
        os.chown(path, self.uid, self.gid, follow_symlinks=False)


@pytest.fixture(scope="session")
def other_user() -> OtherUser:
    """Another local account: created when running as root, else the test is skipped."""
    if os.geteuid() != 0:
        pytest.skip("needs a second local user: run as root (as CI does) to have one created")
    try:
        entry = pwd.getpwnam(OTHER_USER)
    except KeyError:
        # xdist workers may race to create it: "already exists" (exit 9) is fine.
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER_USER],
                       check=False, capture_output=True)
        entry = pwd.getpwnam(OTHER_USER)
    return OtherUser(entry.pw_name, entry.pw_uid, entry.pw_gid)
