// Tests that spawn the service (or the Action) as a child process run the bundle of the current sources.
import { buildAction, buildService } from "../scripts/build.js";

export default async function globalSetup() {
  // .ci/run builds once, then runs the suite on SQLite and on PostgreSQL side by side: neither rebuilds under the other.
  if (process.env.ASSURE_TEST_BUILT === "1") return;
  await buildService();
  // The Action's tests run its committed bundle: rebuilt here, so they test the sources (CI checks it was committed).
  await buildAction();
}
