"""The copied-in public session files stay byte-for-byte what their authors published, and each is accounted for."""

import hashlib

from tests.public_fixtures import PUBLIC_FIXTURES


def listed_digests() -> dict[str, str]:
    lines = (PUBLIC_FIXTURES / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines)}


def test_every_session_file_is_listed_and_unchanged():
    files = {str(p.relative_to(PUBLIC_FIXTURES)) for p in PUBLIC_FIXTURES.glob("*/*.json*")}
    digests = listed_digests()
    assert set(digests) == files
    for name, digest in digests.items():
        assert hashlib.sha256((PUBLIC_FIXTURES / name).read_bytes()).hexdigest() == digest, name


def test_every_file_has_its_provenance_and_licence():
    readme = (PUBLIC_FIXTURES / "README.md").read_text()
    for name in listed_digests():
        assert f"`{name}`" in readme, name
    licences = sorted(p.name for p in (PUBLIC_FIXTURES / "licences").iterdir())
    assert licences == ["ai-sessions.LICENSE", "aim.LICENSE", "claude-code-viewer.LICENSE", "spotter.LICENSE"]
    assert all((PUBLIC_FIXTURES / "licences" / name).read_text().startswith("MIT License") for name in licences)
