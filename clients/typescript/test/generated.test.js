// The committed types are exactly what the pinned generators make: types/protocol.d.ts from the
// checked-in schema (json-schema-to-typescript), and the API declarations from src/ (tsc, which
// also type-checks the JSDoc). A change without regenerating fails here.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

test("types/protocol.d.ts matches the schema", { timeout: 60_000 }, () => {
  // Exits non-zero, with a message saying what to run, when the committed file differs.
  execFileSync(process.execPath, ["scripts/generate-types.mjs", "--check"], { cwd: PACKAGE, stdio: "pipe" });
});

test("the API declarations in types/ match src/ and src/ type-checks", { timeout: 120_000 }, () => {
  const out = mkdtempSync(join(tmpdir(), "openturn-client-types-"));
  try {
    const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
    try {
      execFileSync(process.execPath, [tsc, "-p", ".", "--outDir", out], { cwd: PACKAGE, stdio: "pipe" });
    } catch (error) {
      // tsc prints its diagnostics on stdout.
      assert.fail(`tsc found errors in src/:\n${/** @type {any} */ (error).stdout}`);
    }
    for (const file of readdirSync(out)) {
      assert.equal(
        readFileSync(join(out, file), "utf8"),
        readFileSync(join(PACKAGE, "types", file), "utf8"),
        `types/${file} is stale: run scripts/regenerate-clients (or \`npm run typecheck\` in clients/typescript) and commit it`,
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("a TypeScript consumer compiles against the package's declarations", { timeout: 120_000 }, () => {
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", "test/types"], { cwd: PACKAGE, stdio: "pipe" });
  } catch (error) {
    assert.fail(`test/types/consumer.ts does not compile:\n${/** @type {any} */ (error).stdout}`);
  }
});
