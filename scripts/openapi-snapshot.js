// `npm run openapi:snapshot`: writes the OpenAPI document the built service serves to
// docs/openapi-v1.json, the v1 contract that CI checks every change against (additive changes
// update it in the same commit; a breaking change fails the tests).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "assure-openapi-"));
const service = spawn(process.execPath, ["build/app/main.js"], {
  cwd: root,
  env: { PATH: process.env.PATH, HOST: "127.0.0.1", PORT: "0", ASSURE_DB: join(dir, "assure.db"), LOG_LEVEL: "info" },
  stdio: ["ignore", "pipe", "inherit"],
});
try {
  const port = await new Promise((resolve, reject) => {
    service.once("exit", (code) => reject(new Error(`the service exited with ${code}`)));
    service.stdout.on("data", (chunk) => {
      const found = /"port":(\d+)/.exec(chunk.toString());
      if (found) resolve(Number(found[1]));
    });
  });
  const document = await (await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)).json();
  writeFileSync(join(root, "docs/openapi-v1.json"), `${JSON.stringify(document, null, 2)}\n`);
  console.log("Wrote docs/openapi-v1.json");
} finally {
  service.kill();
  rmSync(dir, { recursive: true, force: true });
}
