"""The upstream test vectors (tool-result-retention.test.ts, compactionInputSlimming.test.ts),
as described in shared/reference/qwen-doctor-memory.md §1 and §2.5, with their
published expected figures. They also feed vectors.jsonl.gz, so Qwen's own
answers for them are checked against these numbers too.
"""

from __future__ import annotations

from doctor.core.sentinels import TOOL_OUTPUT_TRUNCATED_PREFIX


def fr(output=None, name="shell", **response):
    body = {"output": output} if output is not None else {}
    body.update(response)
    return {"role": "user", "parts": [{"functionResponse": {"name": name, "response": body}}]}


def published() -> list[tuple[str, dict, dict]]:
    """(name, case, expected subset of the retention answer / partChars)."""
    text = {"role": "model", "parts": [{"text": "hello"}]}
    return [
        ("empty", {"history": []}, {"toolResultCount": 0, "totalChars": 0, "largestResultChars": 0,
                                   "oversizedResultCount": 0, "oversizedThresholdChars": 30000}),
        ("text only", {"history": [text]}, {"toolResultCount": 0, "totalChars": 0}),
        ("100 + 500", {"history": [fr("a" * 100), fr("b" * 500), text]},
         {"toolResultCount": 2, "totalChars": 728, "largestResultChars": 564, "oversizedResultCount": 0}),
        ("raw chars, no escaping", {"history": [fr("line\n" * 5980)]},
         {"largestResultChars": 29964, "oversizedResultCount": 0}),
        ("one over 2x+500", {"history": [fr("z" * 60501), fr("small")]}, {"oversizedResultCount": 1}),
        ("exactly 60000", {"history": [fr("z" * 60000)]}, {"oversizedResultCount": 0}),
        ("truncated prefix skipped", {"history": [fr(TOOL_OUTPUT_TRUNCATED_PREFIX + ".\n" + "x" * 100000)]},
         {"oversizedResultCount": 0, "totalChars": len(TOOL_OUTPUT_TRUNCATED_PREFIX) + 2 + 100000 + 64}),
        ("threshold 5", {"history": [fr("q" * 511)], "thresholdChars": 5},
         {"oversizedThresholdChars": 5, "oversizedResultCount": 1}),
        ("per-tool budgets", {
            "history": [fr("a" * 60000, name="big_budget_tool"), fr("b" * 801, name="small_budget_tool"),
                        fr("c" * 500, name="unknown_tool")],
            "budgets": {"big_budget_tool": 500000, "small_budget_tool": 100}}, {"oversizedResultCount": 1}),
        ("infinite budget", {"history": [fr("d" * 100000)], "budgets": {"shell": "Infinity"}},
         {"oversizedResultCount": 0, "totalChars": 100064}),
        ("response undefined", {"history": [{"role": "user", "parts": [{"functionResponse": {"name": "shell"}}]}]},
         {"toolResultCount": 1, "totalChars": 64}),
        ("content without parts", {"history": [{"role": "user"}, fr("ok")]}, {"toolResultCount": 1}),
        ("nested image", {"history": [{"role": "user", "parts": [{"functionResponse": {
            "name": "read_file", "response": {"output": "img"}, "parts": [{"inlineData": {}}]}}]}]},
         {"totalChars": 3 + 6400 + 64}),
        ("nested image at 800", {"history": [{"role": "user", "parts": [{"functionResponse": {
            "name": "read_file", "response": {"output": "img"}, "parts": [{"inlineData": {}}]}}]}],
            "imageTokenEstimate": 800}, {"totalChars": 3 + 3200 + 64}),
        ("persisted error skipped", {"history": [fr(error="<persisted-output>job-123</persisted-output>" + "x" * 100000)]},
         {"oversizedResultCount": 0}),
        ("long error", {"history": [fr(error="e" * 65000)]}, {"oversizedResultCount": 1}),
        ("two results in one content", {"history": [{"role": "user", "parts": [
            {"functionResponse": {"name": "shell", "response": {"output": "a" * 100}}},
            {"functionResponse": {"name": "shell", "response": {"output": "b" * 200}}}]}]},
         {"toolResultCount": 2, "totalChars": 428, "largestResultChars": 264}),
        ("infinite threshold", {"history": [], "thresholdChars": "Infinity"}, {"oversizedThresholdChars": 0}),
        ("estimator vectors", {"parts": [
            {"text": "hello"}, {"inlineData": {"data": "x" * 1000000}},
            {"functionCall": {"name": "read_file", "args": {"path": "/a"}}},
            {"functionResponse": {"name": "shell", "response": {"error": "x" * 10000}}}]},
         {"partChars": [5, 6400, len('{"functionCall":{"name":"read_file","args":{"path":"/a"}}}'), 10064]}),
    ]


def published_cases() -> list[dict]:
    return [case for _, case, _ in published()]
