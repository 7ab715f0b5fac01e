// `npm pack` (prepack, postpack): the package ships npm-shrinkwrap.json, a copy of the lock file, so
// that `npm install <package>` installs exactly the dependencies that were tested (npm leaves the
// devDependencies out). The repository keeps package-lock.json only.
import { copyFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = new URL("..", import.meta.url);
const shrinkwrap = fileURLToPath(new URL("npm-shrinkwrap.json", root));
if (process.argv.includes("--remove")) rmSync(shrinkwrap, { force: true });
else copyFileSync(fileURLToPath(new URL("package-lock.json", root)), shrinkwrap);
