import type { EndpointProtocol } from "../../contract/index.js";
import { openAiChat } from "./openai-chat.js";
import type { AgentProtocol } from "./types.js";

/** Every protocol an environment's agent may speak, by the name its endpoint gives. */
export const AGENT_PROTOCOLS: Readonly<Record<EndpointProtocol, AgentProtocol>> = {
  "openai-chat": openAiChat,
};
