import type { EndpointProtocol } from "../../contract/index.js";
import { a2a } from "./a2a.js";
import { anthropicMessages } from "./anthropic-messages.js";
import { httpAgent } from "./http.js";
import { openAiChat } from "./openai-chat.js";
import { openAiResponses } from "./openai-responses.js";
import type { AgentProtocol } from "./types.js";

/** Every protocol an environment's agent may speak, by the name its endpoint gives. */
export const AGENT_PROTOCOLS: Readonly<Record<EndpointProtocol, AgentProtocol>> = {
  "openai-chat": openAiChat,
  "openai-responses": openAiResponses,
  "anthropic-messages": anthropicMessages,
  http: httpAgent,
  a2a,
};
