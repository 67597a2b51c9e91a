// The share of dialect-specific code in the SQL adapters: code lines (not blank, not only a
// comment) of adapters/sqlite and adapters/postgres against those of the shared adapters/sql.
// `node scripts/dialect-share.mjs [word...]`: with words, only files whose name contains one.
import { readdirSync, readFileSync } from "node:fs";

const words = process.argv.slice(2);
const picked = (name) => name.endsWith(".ts") && (words.length === 0 || words.some((w) => name.includes(w)));

function codeLines(text) {
  let n = 0;
  let inBlock = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (inBlock) {
      if (line.includes("*/")) inBlock = false;
    } else if (line.startsWith("/*")) inBlock = !line.includes("*/");
    else if (line !== "" && !line.startsWith("//")) n++;
  }
  return n;
}

const count = (dir) => readdirSync(`adapters/${dir}`).filter(picked).reduce((sum, f) => sum + codeLines(readFileSync(`adapters/${dir}/${f}`, "utf8")), 0);
const [sqlite, postgres, shared] = ["sqlite", "postgres", "sql"].map(count);
const share = ((100 * (sqlite + postgres)) / (sqlite + postgres + shared)).toFixed(1);
console.log(`code lines: sqlite ${sqlite}, postgres ${postgres}, shared sql ${shared}; dialect-specific ${share} %`);
