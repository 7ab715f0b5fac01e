import { startAgentEndpoint, type AgentEndpoint } from "./agent-endpoint.js";
import { seedProject, type SeededProject, type SeedOptions } from "./seed.js";
import { startTestService, type StartOptions, type TestService } from "./service.js";

export type { AgentEndpoint };

export interface SeededService {
  t: TestService;
  agent: AgentEndpoint;
  p: SeededProject;
  /** Closes the service and the agent. */
  close(): Promise<void>;
}

/** What most API tests start from: the service, the example agent and a project seeded against it. */
export async function startSeededService(options: StartOptions = {}, seed?: SeedOptions): Promise<SeededService> {
  const t = await startTestService(options);
  const agent = await startAgentEndpoint();
  const close = async () => {
    await t.close();
    await agent.close();
  };
  try {
    return { t, agent, p: await seedProject(t, agent.baseUrl, seed), close };
  } catch (error) {
    await close();
    throw error;
  }
}
