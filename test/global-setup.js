// Tests that spawn the service (or the Action) as a child process run the bundle of the current sources.
import { buildAction, buildService } from "../scripts/build.js";

export default async function globalSetup() {
  await buildService();
  // The Action's tests run its committed bundle: rebuilt here, so they test the sources (CI checks it was committed).
  await buildAction();
}
