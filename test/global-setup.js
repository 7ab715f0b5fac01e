// Tests that spawn the service as a child process run the bundle of the current sources.
import { buildService } from "../scripts/build.js";

export default async function globalSetup() {
  await buildService();
}
