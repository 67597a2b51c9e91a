import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Files and functions that fit in a head (house style): no source file over 300 lines and no
// function body over 80, in src/, adapters/ and examples/. A long one is split by what its parts do
// (docs/architecture.md says where each kind of code goes), not cut at the line.

const root = fileURLToPath(new URL("..", import.meta.url));
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}
const FILES = ["src", "adapters", "examples"].flatMap(sources);

const lineCount = (text: string): number => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

/** Every function, arrow or method body of `file` longer than the bound, as `file:line name (N lines)`. */
function longFunctions(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node): void => {
    const fn = ts.isFunctionDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isMethodDeclaration(node);
    if (fn && node.body) {
      const lines = lineOf(node.body.getEnd()) - lineOf(node.body.getStart()) - 1;
      const name = node.name?.getText() ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name.getText() : "<anonymous>");
      if (lines > MAX_FUNCTION_LINES) found.push(`${relative(root, join(root, file))}:${lineOf(node.body.getStart()) + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("house style: sizes", () => {
  it("reads the sources", () => {
    expect(FILES.length).toBeGreaterThan(300);
  });

  it(`has no source file over ${MAX_FILE_LINES} lines`, () => {
    const long = FILES.map((file) => [file, lineCount(readFileSync(join(root, file), "utf8"))] as const).filter(([, n]) => n > MAX_FILE_LINES);
    expect(long.map(([file, n]) => `${file} (${n} lines)`)).toStrictEqual([]);
  });

  it(`has no function body over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(FILES.flatMap(longFunctions)).toStrictEqual([]);
  });
});
