// npm ships the root README.md in the tarball. The repository's README is for people working on
// runplane (it starts with `npm install && npm start`); the package gets the library user's README
// (docs/npm-readme.md) instead, swapped in by `prepack` and put back by `postpack`.
import { copyFileSync, existsSync, renameSync } from "node:fs";

const KEPT = ".readme-repo.md";
const mode = process.argv[2];
if (mode === "swap") {
  // A kept copy means an earlier pack failed before postpack: the README in place is the package one.
  if (!existsSync(KEPT)) renameSync("README.md", KEPT);
  copyFileSync("docs/npm-readme.md", "README.md");
} else if (mode === "restore") {
  if (existsSync(KEPT)) renameSync(KEPT, "README.md");
} else {
  console.error("usage: node scripts/pack-readme.mjs swap|restore");
  process.exit(2);
}
