"""Which spill file belongs to which result: the audit's checks, looked up by ordinal or call id."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SpillLinks:
    """The audit's checks and findings indexed by result ordinal and by call id."""

    by_ordinal: dict[int, list] = field(default_factory=dict)
    by_call: dict[str, list] = field(default_factory=dict)
    findings: dict[int, list] = field(default_factory=dict)  # id(pointer) -> findings

    @classmethod
    def of(cls, audit) -> "SpillLinks":
        links = cls()
        if audit is None:
            return links
        for check in audit.checks:
            pointer = check.pointer
            if pointer.ordinal is not None:
                links.by_ordinal.setdefault(pointer.ordinal, []).append(check)
            if pointer.call_id:
                links.by_call.setdefault(pointer.call_id, []).append(check)
        for finding in audit.findings:
            if finding.pointer is not None:
                links.findings.setdefault(id(finding.pointer), []).append(finding)
        return links

    def checks_for(self, result) -> list:
        checks = self.by_ordinal.get(result.ordinal)
        if not checks and result.call_id:
            checks = self.by_call.get(result.call_id)
        return list(checks or ())

    def findings_for(self, check) -> list:
        return list(self.findings.get(id(check.pointer), ()))

    def openable(self, result):
        """The first check whose file exists and may be opened (inside its roots), else None."""
        for check in self.checks_for(result):
            resolution = check.resolution
            if resolution.exists and resolution.inside and resolution.real is not None:
                return check
        return None

    def status(self, result) -> str:
        """A short pointer status for the results table."""
        checks = self.checks_for(result)
        if not checks:
            return "" if result.stub is None else "unaudited"
        problems = [f.kind for check in checks for f in self.findings_for(check) if f.severity != "info"]
        if problems:
            return problems[0]
        return "ok"
