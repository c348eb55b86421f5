#!/usr/bin/env python3
"""Expected figures of the limit recordings (claude/limits, claude/raised-limits, gemini/raised-limit,
codex/raised-limit), derived from the recording alone: never from doctor's code.

Usage: python3 tests/recordings/limit_figures.py <scenario dir> > <scenario dir>/expected.json

For each tool result, in the order the session file holds them: the tool, the UTF-16 length of the text the
client wrote for the model, the length the scripted model server actually received (received.json, taken
from the HTTP request bodies), and which of the client's own layers bounded it, read off the client's own
markers:
- Claude Code: `<persisted-output>` stub (preview chars, spill bytes), `Error: result (N characters) exceeds
  maximum allowed tokens. Output has been saved to P` (MCP), `File content (…) exceeds maximum allowed size`
  (Read refused), `toolUseResult.file.truncatedByTokenCap` + the `read_truncation_notice` banner (Read cut);
- Gemini CLI: `Output too large. Showing first H and last T characters. For full output see: P`;
- Codex CLI: `Warning: truncated output (original token count: N)` and `…N chars truncated…`;
anything else is "whole". The settings file the client read (copied into the recording) is quoted too.
"""
import glob, json, os, re, sys

u16 = lambda s: len(s.encode("utf-16-le")) // 2


def lines(path):
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def spill_bytes(d, path):
    local = os.path.join(d, "home", path.split("/home/", 1)[1]) if "/home/" in path else None
    return os.path.getsize(local) if local and os.path.exists(local) else None


def claude(d):
    (path,) = glob.glob(os.path.join(d, "home/.claude/projects/*/*.jsonl"))
    recs = lines(path)
    names = {b["id"]: b["name"] for r in recs if r.get("type") == "assistant"
             for b in r["message"].get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"}
    banners = [r["attachment"].get("banner", "") for r in recs
               if r.get("type") == "attachment" and r["attachment"].get("type") == "read_truncation_notice"]
    out = []
    for r in recs:
        if r.get("type") != "user" or not isinstance(r["message"].get("content"), list):
            continue
        for b in r["message"]["content"]:
            if b.get("type") != "tool_result":
                continue
            c = b.get("content")
            text = c if isinstance(c, str) else "".join(x.get("text", "") for x in c or [] if x.get("type") == "text")
            row = {"id": b["tool_use_id"], "tool": names.get(b["tool_use_id"]), "chars": u16(text)}
            tur = r.get("toolUseResult")
            mcp = re.match(r"Error: result \(([\d,]+) characters\) exceeds maximum allowed tokens\. "
                           r"Output has been saved to (\S+?)\.?\n", text)
            if text.startswith("<persisted-output>"):
                spill = re.search(r"Full output saved to: (\S+)", text).group(1)
                preview = text.split("Preview (first 2KB):\n", 1)[1].rsplit("\n...\n</persisted-output>", 1)[0]
                row.update(layer="persisted-output", previewChars=u16(preview), spill=os.path.basename(spill),
                           spillBytes=spill_bytes(d, spill))
            elif mcp:
                row.update(layer="mcp-saved", declaredChars=int(mcp.group(1).replace(",", "")),
                           spill=os.path.basename(mcp.group(2)), spillBytes=spill_bytes(d, mcp.group(2)))
            elif "exceeds maximum allowed size" in text:
                sizes = re.match(r"File content \(([\d.]+)KB\) exceeds maximum allowed size \((\d+)KB\)", text)
                row.update(layer="read-refused", fileKB=float(sizes.group(1)), capKB=int(sizes.group(2)))
            elif isinstance(tur, dict) and (tur.get("file") or {}).get("truncatedByTokenCap"):
                f = tur["file"]
                banner = next((x for x in banners if f["filePath"] in x), "")
                tokens = re.search(r"\((\d+) tokens, cap (\d+)\)", banner)
                row.update(layer="read-truncated", numLines=f["numLines"], totalLines=f["totalLines"],
                           countedTokens=int(tokens.group(1)) if tokens else None,
                           capTokens=int(tokens.group(2)) if tokens else None)
            else:
                row["layer"] = "whole"
            out.append(row)
    return out, os.path.join(d, "home/.claude/settings.json")


def gemini(d):
    (path,) = glob.glob(os.path.join(d, "home/.gemini/tmp/*/chats/*.jsonl"))
    out = []
    for r in lines(path):
        if r.get("type") != "user" or not isinstance(r.get("content"), list):
            continue
        for part in r["content"]:
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if not fr:
                continue
            text = fr["response"].get("output", "")
            row = {"id": fr["id"], "tool": fr["name"], "chars": u16(text)}
            cut = re.match(r"Output too large\. Showing first ([\d,]+) and last ([\d,]+) characters\. "
                           r"For full output see: (\S+)", text)
            if cut:
                row.update(layer="truncated", headChars=int(cut.group(1).replace(",", "")),
                           tailChars=int(cut.group(2).replace(",", "")), spill=os.path.basename(cut.group(3)),
                           spillBytes=spill_bytes(d, cut.group(3)))
            else:
                row["layer"] = "whole"
            out.append(row)
    return out, os.path.join(d, "home/.gemini/settings.json")


def codex(d):
    (path,) = glob.glob(os.path.join(d, "home/.codex/sessions/*/*/*/rollout-*.jsonl"))
    recs = lines(path)
    names = {r["payload"]["call_id"]: r["payload"].get("name") for r in recs
             if r.get("type") == "response_item" and r["payload"].get("type") == "function_call"}
    out = []
    for r in recs:
        pl = r.get("payload") or {}
        if r.get("type") != "response_item" or pl.get("type") != "function_call_output":
            continue
        text = pl["output"] if isinstance(pl["output"], str) else "".join(x.get("text", "") for x in pl["output"])
        row = {"id": pl["call_id"], "tool": names.get(pl["call_id"]), "chars": u16(text)}
        original = re.search(r"^Original token count: (\d+)$", text, re.M)
        row["originalTokens"] = int(original.group(1)) if original else None
        if "Warning: truncated output" in text:
            cut = re.search(r"…(\d+) (chars|tokens) truncated…", text)
            row.update(layer="truncated", cutCount=int(cut.group(1)) if cut else None,
                       cutUnit=cut.group(2) if cut else None)
        else:
            row["layer"] = "whole"
        out.append(row)
    return out, os.path.join(d, "home/.codex/config.toml")


def main(d):
    client = json.load(open(os.path.join(d, "meta.json")))["client"]
    rows, settings = {"claude": claude, "gemini": gemini, "codex": codex}[client](d)
    received = json.load(open(os.path.join(d, "received.json")))["results"]
    for row in rows:
        # Gemini's session id is `<tool>__<request id>`; the request carries the part after `__`.
        got = received.get(row["id"]) or received.get(row["id"].split("__", 1)[-1])
        row["receivedChars"] = got["last"]["chars"] if got else None
    print(json.dumps({
        "client": client,
        "settingsFile": os.path.relpath(settings, d) if os.path.exists(settings) else None,
        "settingsText": open(settings).read() if os.path.exists(settings) else None,
        "results": rows,
        "largestReceivedChars": max(r["receivedChars"] or 0 for r in rows),
        "layers": {layer: sum(r["layer"] == layer for r in rows) for layer in sorted({r["layer"] for r in rows})},
        "measure": "UTF-16 length of each tool result's text as the session file and the request body hold it",
    }, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
