"""What one tar or zip archive from a stranger may cost `doctor scan`: the caps, stated once.

`doctor/triage/archives.py` enforces them; `doctor scan --help` and docs/security.md state them.
An 872-byte `.tar.bz2` can unpack to a gigabyte, a 2 MB zip to 2 GiB: what is unpacked (kept or
skipped on the way, a tar's skipped member is still decompressed) is counted against the
archive's cap, so a bomb costs at most that much decompression and never more disk. Sessions
compress 5 to 20 times, so an archive large enough to hold more than a gigabyte of them is
allowed 100 times its own size. One member is capped at the longest line doctor reads.
"""

MEMBER_BYTES = 256 << 20  # one member unpacked (= sources.jsonl.LINE_CAP)
ARCHIVE_BYTES = 1 << 30  # one archive unpacked, members skipped included...
ARCHIVE_RATIO = 100  # ...or this many times the archive's size on disk, when that is more
ARCHIVE_ENTRIES = 100_000  # entries looked at per archive

TEXT = (f"an archive is read once; at most {ARCHIVE_BYTES >> 30} GiB of it is unpacked (or {ARCHIVE_RATIO} "
        f"times its size, when that is more), {MEMBER_BYTES >> 20} MiB per member, {ARCHIVE_ENTRIES:,} entries; "
        "links, devices and archives inside archives are not followed, and each member left out is listed "
        "as skipped with its reason")
