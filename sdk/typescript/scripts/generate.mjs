// Regenerates src/openapi.ts from the OpenAPI document of this checkout's server
// (`go run ./cmd/carryon openapi`), with the openapi-typescript pinned in package.json.
// CI runs it and fails when the committed file differs (.ci/run: the SDK's drift check).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const root = resolve(sdk, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "carryon-openapi-"));
try {
  const doc = join(dir, "openapi.json");
  writeFileSync(doc, execFileSync("go", ["run", "./cmd/carryon", "openapi"], { cwd: root, maxBuffer: 64 << 20 }));
  const cli = join(sdk, "node_modules", "openapi-typescript", "bin", "cli.js");
  // --empty-objects-unknown: a free-form object (metadata, tool arguments) is Record<string, unknown>.
  execFileSync(process.execPath, [cli, doc, "--empty-objects-unknown", "-o", join(sdk, "src", "openapi.ts")], { stdio: "inherit" });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
