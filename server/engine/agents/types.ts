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

export interface ToolDefinition {
  name: string;
  description?: string | undefined;
  parameters?: Record<string, unknown> | undefined;
}

export interface AgentReply {
  content: string | null;
  tool_calls: AgentToolCall[];
  finish_reason: string | null;
  latency_ms: number;
  /** HTTP attempts it took (more than 1 after transient errors). */
  attempts: number;
}

export interface Agent {
  complete(messages: readonly ChatMessage[], tools: readonly ToolDefinition[], signal: AbortSignal): Promise<AgentReply>;
}
