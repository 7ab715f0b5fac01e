import type { AgentArtifact } from "../../contract/index.js";
import type { AgentPacer } from "../../net/agent-pacer.js";
import type { ThrottledWait, TokenUsage } from "../../net/json-call.js";
import type { EgressPolicy } from "../../net/egress.js";
import type { EnvironmentTarget } from "../../store/index.js";

/** The run engine's view of an agent under test, whatever protocol it speaks. */

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: AgentToolCall[];
  tool_call_id?: string;
}

export interface AgentToolCall {
  id: string;
  name: string;
  /** Exactly what the agent sent, which may not be valid JSON. */
  arguments_raw: string;
}

/** A tool the agent ran itself (a hosted tool: web search, its own MCP server), reported in its answer. */
export interface HostedToolCall {
  id: string;
  /** Set when the answer named no id: assure gave the call this one. */
  id_assigned?: true;
  name: string;
  arguments: Record<string, unknown>;
  /** What the tool gave back, when the answer says. */
  result?: unknown;
}

export interface ToolDefinition {
  name: string;
  description?: string | undefined;
  parameters?: Record<string, unknown> | undefined;
}

export interface AgentReply {
  content: string | null;
  /** Function calls for assure to answer from the spec's mocks. */
  tool_calls: AgentToolCall[];
  /** Tools the agent ran itself, recorded as what it did. */
  hosted_tool_calls: HostedToolCall[];
  finish_reason: string | null;
  latency_ms: number;
  /** The model the answer names (its price is looked up by it); null when it names none. */
  model: string | null;
  /** The tokens the answer reports; null when it reports none. */
  usage: TokenUsage | null;
  /** HTTP attempts it took (more than 1 after transient errors). */
  attempts: number;
  /** Outputs the agent produced besides its message (A2A artifacts), recorded with the answer. */
  artifacts?: AgentArtifact[];
}

/** One call to the agent: the conversation so far, ending with what it is to answer. */
export interface AgentRequest {
  messages: readonly ChatMessage[];
  tools: readonly ToolDefinition[];
  conversationId: string;
  /** The user turn being answered, from 1. */
  turn: number;
  /** The URL of the conversation's MCP server (the spec's tools and mocks), for an agent that runs its own tools. */
  mcpUrl?: string | undefined;
  signal: AbortSignal;
  /** Told of each wait the agent asks for before it answers. */
  onThrottled?: ((wait: ThrottledWait) => void) | undefined;
  /** The W3C `traceparent` sent with the call: the conversation's trace, a span id new for this call. */
  traceparent?: string | undefined;
}

/** What a protocol reads from one answer: the reply but for how the call went. */
export type ModelAnswer = Omit<AgentReply, "latency_ms" | "attempts">;

export interface Agent {
  complete(request: AgentRequest): Promise<AgentReply>;
}

export interface AgentOptions {
  egress: EgressPolicy;
  target: EnvironmentTarget;
  /** Per agent call. */
  timeoutMs: number;
  /** Attempts per call for connection failures and transient HTTP errors. */
  maxAttempts?: number;
  backoffMs?: (attempt: number) => number;
  /** Shared by every call to this environment's agent in the process. */
  pacer?: AgentPacer | undefined;
  /** The run's deadline (epoch ms): waits the agent asks for must end before it. */
  deadline?: number | undefined;
  /** The service's clock, in epoch ms (the deadline is on it). */
  now?: (() => number) | undefined;
}

/**
 * How the service talks to agents of one protocol (an environment's `endpoint.protocol`). Adding
 * a protocol is a file that defines one, its name in the contract's `EndpointProtocol`, and a
 * line in `index.ts`.
 */
export interface AgentProtocol {
  /** Probed with GET under `base_url` before a run is accepted, unless the environment names another path. */
  readinessPath: string;
  /**
   * Who runs the tools the agent calls: assure, answering from the spec's mocks (a call it did not
   * ask for is evidence that none was made), or the agent itself (only the calls it reports are known).
   */
  toolsRunBy: "assure" | "agent";
  /** One agent per conversation: it may keep what it needs between the conversation's calls. */
  makeAgent(options: AgentOptions): Agent;
  /** Whether the environment sends the agent its conversation's MCP URL (which needs the service's public base URL). */
  sendsMcpUrl?(target: EnvironmentTarget): boolean;
}
