"""One resumable reader state per transcript, in doctor's private cache folder, trusted only while it matches.

`<user cache dir>/doctor/statusline/<hash of agent and path>.msgpack` is MessagePack: a digest of
the code that wrote it (doctor's version and the reader and core modules' sizes and times), the
agent and transcript path, the byte offset the state reached, BLAKE2b digests of the transcript's
first 4 KiB and of the 4 KiB before that offset (digests only: no byte of whatever file
`transcript_path` named is kept), and the state as data (`resume.*State.stored()`, msgspec Structs).

Loading is typed decoding: it builds those Structs and JSON values and nothing else (three
MessagePack extension types: a MeasuredText with every length it carries, a string with lone surrogates
as Qwen's truncation leaves them, an integer beyond 64 bits), and runs no code from the file. The
folder is opened through `safety.private_folders` (the user's, 0700, no symlink on the way from
doctor's cache folder; refused, the status line works without a cache and says so once on
stderr), the file with O_NOFOLLOW, the user's and writable by no one else. The state is used only
when the transcript is still at least that long and both digests match; a truncated or rewritten
transcript (or an index written by other code) is read again from byte 0. A state that cannot be
stored (a key with a lone surrogate, nesting too deep) is not: the next call reads again.
Saving writes a temporary file and renames it (`safety.writes`), so two status lines racing each
leave a whole index (the later one wins) and a reader never sees half a file. (No string
annotations in this module: see doctor/core/stored.py.)
"""

import os
import sys
import zlib
from pathlib import Path

import msgspec
from msgspec import Struct

import doctor
from doctor.core.jsvalues import MeasuredText
from doctor.core.lazy_pattern import LazyPattern
from doctor.safety.private_folders import PrivateFolder, cache_root

try:  # hashlib's import loads OpenSSL (~3 ms); BLAKE2 alone is CPython's own module
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a CPython built without it
    from hashlib import blake2b

FORMAT = 3
MARK_BYTES = 4096
FOLDER = "statusline"
# An index larger than this is not read (a 1 GB Claude transcript's is ~25 MB).
MAX_INDEX_BYTES = 256 << 20
# MessagePack extension codes of the values JSON has and MessagePack does not carry as they are.
MEASURED, SURROGATES, BIG_INT = 1, 2, 3
_LONE_SURROGATE = LazyPattern("[\ud800-\udfff]")


class Index(Struct, array_like=True):
    stamp: bytes
    agent: str
    path: str
    offset: int
    head: bytes
    tail: bytes
    state: bytes  # the state's own MessagePack, decoded only once the rest matches


class _WithSurrogates(str):
    """A string holding lone surrogates, which UTF-8 cannot carry: stored as an extension."""


class _BigInt(int):
    """An integer MessagePack cannot carry (JSON allows any): stored as its digits."""


def cache_dir() -> Path:
    return cache_root() / FOLDER


def index_name(agent: str, transcript: Path) -> str:
    name = f"{agent}\0{transcript}".encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(name):08x}{zlib.adler32(name):08x}.msgpack"  # a name, not a check: the path is inside


def code_stamp() -> bytes:
    """A digest of what a stored state's meaning depends on: doctor's version, this format, Python's
    version, and the sizes and times of the readers', status line's and core modules."""
    root = Path(doctor.__file__).parent
    files = sorted([*(root / "sources").rglob("*.py"), *(root / "statusline").glob("*.py"), *(root / "core").glob("*.py")])
    stamp = (doctor.__version__, FORMAT, sys.version_info[:2],
             tuple((str(f.relative_to(root)), s.st_size, s.st_mtime_ns) for f in files for s in (f.stat(),)))
    return blake2b(repr(stamp).encode("utf-8", "surrogateescape"), digest_size=16).digest()


def marks(handle, offset: int) -> tuple[bytes, bytes]:
    """Digests of the first MARK_BYTES of an open transcript and of the MARK_BYTES before `offset`."""
    handle.seek(0)
    head = handle.read(min(offset, MARK_BYTES))
    start = max(0, offset - MARK_BYTES)
    handle.seek(start)
    return _digest(head), _digest(handle.read(offset - start))


def load(folder: PrivateFolder, agent: str, transcript: Path, stamp: bytes, state_type):
    """The saved state of `transcript` (a `state_type`) when it still matches the file, else None."""
    try:
        data = folder.read(index_name(agent, transcript), MAX_INDEX_BYTES)
    except OSError:  # Refused (a symlink, another's file): the next save replaces it
        return None
    if data is None:
        return None
    try:
        saved = _decoder(Index).decode(data)
    except (msgspec.DecodeError, ValueError):
        return None
    if saved.stamp != stamp or saved.agent != agent or saved.path != str(transcript) or saved.offset < 0:
        return None
    try:
        with open(transcript, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < saved.offset:
                return None  # truncated
            if marks(handle, saved.offset) != (saved.head, saved.tail):
                return None  # rewritten
    except OSError:
        return None
    try:
        return state_type.restored(transcript, _decoder(state_type.stored_type()).decode(saved.state))
    except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
        return None


def snapshot(state, transcript: Path, stamp: bytes) -> bytes | None:
    """The index file's bytes for `state` as it is now (None: the file changed under us, or the state
    cannot be stored: the next call reads again)."""
    try:
        with open(transcript, "rb") as handle:
            head, tail = marks(handle, state.offset)
    except OSError:
        return None
    try:
        stored = state.stored()
    except ValueError:
        return None
    try:
        data = _encode(stored)
    except (UnicodeEncodeError, OverflowError):  # Qwen's truncation cuts surrogate pairs; JSON has big ints
        try:
            data = _encode(_encodable(stored))
        except (UnicodeEncodeError, OverflowError, RecursionError):
            return None
    except RecursionError:
        return None
    return _encode(Index(stamp, state.agent, str(transcript), state.offset, head, tail, data))


def save(folder: PrivateFolder, agent: str, transcript: Path, data: bytes) -> None:
    """Replace the index of `transcript` in one step (a racing writer's whole file, or ours)."""
    folder.write(index_name(agent, transcript), data)


def _digest(data: bytes) -> bytes:
    return blake2b(data, digest_size=16).digest()


def _extension(value: object) -> msgspec.msgpack.Ext:
    kind = type(value)
    if kind is MeasuredText:
        token = value.json_token
        return msgspec.msgpack.Ext(MEASURED, _encode_measured((
            value.encode("utf-8", "surrogatepass"), value.js_length, value.utf8_length, value.json_length,
            None if token is None else (os.fsencode(token[0]), token[1], token[2]))))
    if kind is _WithSurrogates:
        return msgspec.msgpack.Ext(SURROGATES, value.encode("utf-8", "surrogatepass"))
    if kind is _BigInt:
        return msgspec.msgpack.Ext(BIG_INT, str(int(value)).encode("ascii"))
    raise TypeError(f"a status-line state holds a {kind.__name__}")


def _value(code: int, data: memoryview) -> object:
    """The value of an extension, only those three kinds."""
    if code == MEASURED:
        head, js_length, utf8_length, json_length, token = _decode_measured(data)
        return MeasuredText(str(head, "utf-8", "surrogatepass"), js_length, utf8_length, json_length,
                            None if token is None else (os.fsdecode(token[0]), token[1], token[2]))
    if code == SURROGATES:
        return str(data, "utf-8", "surrogatepass")
    if code == BIG_INT:
        return int(str(data, "ascii"))
    raise ValueError(f"unknown MessagePack extension {code}")


_encode = msgspec.msgpack.Encoder(enc_hook=_extension).encode
# A MeasuredText: its head (UTF-8 with lone surrogates kept), JS length, and the lengths an agent's own
# measure may add (UTF-8 bytes, JSON length, or where its JSON token is in the session file).
_encode_measured = msgspec.msgpack.Encoder().encode
_decode_measured = msgspec.msgpack.Decoder(
    tuple[bytes, int, int | None, int | None, tuple[bytes, int, int] | None]).decode
_decoders: dict[type, msgspec.msgpack.Decoder] = {}


def _decoder(kind: type) -> msgspec.msgpack.Decoder:
    decoder = _decoders.get(kind)
    if decoder is None:
        decoder = _decoders[kind] = msgspec.msgpack.Decoder(kind, ext_hook=_value)
    return decoder


def _encodable(value: object) -> object:
    """`value` with its strings holding lone surrogates and its integers beyond 64 bits marked for an
    extension (walked only when the plain encoding refused one)."""
    kind = type(value)
    if kind is str:
        return _WithSurrogates(value) if _LONE_SURROGATE.search(value) else value
    if kind is int:
        return value if -(1 << 63) <= value < (1 << 64) else _BigInt(value)
    if kind is list or kind is tuple:
        return [_encodable(item) for item in value]
    if kind is dict:
        return {key: _encodable(item) for key, item in value.items()}  # a key stays as it is: one with a surrogate fails
    if isinstance(value, Struct):
        return msgspec.structs.replace(value, **{name: _encodable(getattr(value, name)) for name in value.__struct_fields__})
    return value

