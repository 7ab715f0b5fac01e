import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Tool } from "../contract/index.js";
import { outsideAudit } from "../store/audit-scope.js";
import type { Recorder } from "./recorder.js";
import type { RecordedToolCall } from "./traces/merge-calls.js";
import { answerToolCall, type Injection, type ToolAnswer } from "./tool-mocks.js";

/** Where the MCP server of a conversation is served: `{base}/mcp/{token}`. */
export const MCP_PATH = "/mcp";

/** How many ended conversations' tokens are remembered, to say "ended" rather than "unknown". */
const ENDED_REMEMBERED = 10_000;

/** What a live conversation's MCP server offers and does. */
export interface McpLiveConversation {
  state: "live";
  conversationId: string;
  tools: readonly Tool[];
  /** Answers a call from the spec's mocks, recording it in the turn and step being answered. */
  call(name: string, args: Record<string, unknown> | undefined): ToolAnswer;
  /** The agent listed the tools: recorded (once per agent call), as evidence that the calls it makes reach assure. */
  listed(): void;
}

export type McpConversationLookup = McpLiveConversation | { state: "ended" | "unknown" };

/** A conversation's MCP URL, for as long as the conversation lives. */
export interface McpLease {
  url: string;
  /** The turn and agent call now being answered: the calls that come meanwhile are recorded there. */
  answering(turn: number, step: number): void;
  /** The conversation ended: its URL refuses every request from now on. */
  close(): void;
}

export interface OpenMcpConversation {
  conversationId: string;
  tools: readonly Tool[];
  injection: Injection | undefined;
  recorder: Recorder;
  /** Told of each call recorded (the conversation's trace does not record it again). */
  onCall?: ((call: RecordedToolCall) => void) | undefined;
}

/**
 * The conversations whose tools are served over MCP, by the unguessable token in their URL (the
 * token is the capability: no key needed). A call is answered from the spec's mocks as the model
 * protocols' function calls are, and recorded through the run's recorder, in the turn being answered.
 * Without the service's public base URL (ASSURE_BASE_URL) there is no URL to give an agent: none is opened.
 */
export function makeMcpConversations({ baseUrl }: { baseUrl: string | undefined }) {
  const live = new Map<string, McpLiveConversation>();
  const ended = new LRUCache<string, true>({ max: ENDED_REMEMBERED });
  const root = baseUrl?.replace(/\/+$/, "");

  return {
    /** Whether URLs can be minted (the service knows its public base URL). */
    get enabled(): boolean {
      return root !== undefined;
    },
    /** Mints a URL for a conversation starting now; undefined without a public base URL. */
    open({ conversationId, tools, injection, recorder, onCall }: OpenMcpConversation): McpLease | undefined {
      if (root === undefined) return undefined;
      const token = randomBytes(24).toString("base64url");
      let turn = 1;
      let step = 1;
      let calls = 0;
      let listedAt: string | undefined;
      live.set(token, {
        state: "live",
        conversationId,
        tools,
        call(name, args) {
          const at = { conversation_id: conversationId, turn, step };
          const callId = `mcp_${++calls}`;
          const answer = answerToolCall(tools, name, args, injection);
          // The call is evidence of the run, written by the engine's recorder: no request's audit event.
          outsideAudit(() => {
            recorder.record("tool.called", {
              ...at,
              call_id: callId,
              name,
              arguments: args ?? {},
              arguments_raw: JSON.stringify(args ?? {}),
              ...(args === undefined ? { arguments_error: "arguments are not a JSON object" } : {}),
              executed_by: "assure",
              source: { kind: "mcp" },
            });
            recorder.record("tool.returned", {
              ...at,
              call_id: callId,
              name,
              result: answer.result,
              source: answer.source,
              injected: answer.injected,
            });
            recorder.flushInBackground();
          });
          onCall?.({
            turn,
            step,
            callId,
            idGiven: false,
            name,
            arguments: args ?? {},
            hasResult: true,
          });
          return answer;
        },
        listed() {
          // Once per agent call: an agent may list the tools before each call it makes.
          if (listedAt === `${turn}/${step}`) return;
          listedAt = `${turn}/${step}`;
          outsideAudit(() => {
            recorder.record("tools.listed", {
              conversation_id: conversationId,
              turn,
              step,
              tools: tools.map((tool) => tool.name),
              source: { kind: "mcp" },
            });
            recorder.flushInBackground();
          });
        },
      });
      return {
        url: `${root}${MCP_PATH}/${token}`,
        answering(nextTurn, nextStep) {
          turn = nextTurn;
          step = nextStep;
        },
        close() {
          if (live.delete(token)) ended.set(token, true);
        },
      };
    },
    /** The conversation a token names: live, ended, or unknown. */
    find(token: string): McpConversationLookup {
      const found = live.get(token);
      if (found) return found;
      return { state: ended.has(token) ? "ended" : "unknown" };
    },
  };
}

export type McpConversations = ReturnType<typeof makeMcpConversations>;
