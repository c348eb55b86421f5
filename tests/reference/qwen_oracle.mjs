// Qwen Code 0.24.4's own estimator and retention analyzer, as a line-oriented oracle.
//
// Reads JSON lines on stdin: {"id", "history": Content[], "parts": Part[],
// "thresholdChars"?: number|"Infinity", "budgets"?: {name: number|"Infinity"},
// "imageTokenEstimate"?: number}. Writes one JSON line per input:
// {"id", "retention": <analyzeToolResultRetention result> | {"error": msg},
//  "partChars": [estimatePartChars(part) | {"error": msg}]}.
// The bundle is the published npm package; QWEN_CHUNKS points at its chunks/ dir.
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import path from "node:path";

const chunks = process.env.QWEN_CHUNKS ?? "/opt/qwen-ref/node_modules/@qwen-code/qwen-code/chunks";
const load = (name) => import(pathToFileURL(path.join(chunks, name)).href);

const { estimatePartChars } = await load("chunk-GC3J5W2O.js");
const { analyzeToolResultRetention } = await load("chunk-CK5HUN74.js");

const num = (v) => (v === "Infinity" ? Infinity : v);

function run(input) {
  const out = { id: input.id };
  const options = {};
  if (input.thresholdChars !== undefined) options.thresholdChars = num(input.thresholdChars);
  if (input.imageTokenEstimate !== undefined) options.imageTokenEstimate = input.imageTokenEstimate;
  if (input.budgets !== undefined) {
    const budgets = input.budgets;
    // Like the registry's Map lookup: only string names can match.
    options.resolveToolBudgetChars = (name) =>
      typeof name === "string" && Object.prototype.hasOwnProperty.call(budgets, name)
        ? num(budgets[name])
        : undefined;
  }
  try {
    out.retention = analyzeToolResultRetention(input.history ?? [], options);
  } catch (e) {
    out.retention = { error: String(e && e.message) };
  }
  out.partChars = (input.parts ?? []).map((part) => {
    try {
      return estimatePartChars(part, input.imageTokenEstimate ?? 1600);
    } catch (e) {
      return { error: String(e && e.message) };
    }
  });
  return out;
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  process.stdout.write(JSON.stringify(run(JSON.parse(line))) + "\n");
}
