import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from "@a2a-js/sdk";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from "@a2a-js/sdk/client";
import { randomUUID } from "node:crypto";
import { startExampleA2aAgent, type ExampleA2aAgent } from "../../../examples/agent/a2a.js";

const text = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});
const userMessage = (value: string, ids: { contextId?: string; taskId?: string } = {}): Message => ({
  messageId: randomUUID(),
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: Role.ROLE_USER,
  parts: [text(value)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const request = (message: Message) => ({ tenant: "", message, configuration: undefined, metadata: undefined });
const textOf = (parts: readonly Part[] = []) =>
  parts.flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : [])).join("");
const asTask = (result: Message | Task): Task => {
  if ("messageId" in result) throw new Error(`a message, not a task: ${textOf(result.parts)}`);
  return result;
};

/**
 * Before assure's adapter is tested against the A2A example, the official SDK's client proves that
 * the example speaks A2A: its card, a message sent, the context kept, a task that needs input
 * answered in the same task, artifacts, streaming — in 1.0, and in 0.3 through the compatibility layer.
 */
describe.each(["1.0", "0.3"] as const)(
  "the A2A example agent (A2A %s), through the official SDK's client",
  (version) => {
    let agent: ExampleA2aAgent;
    const legacyCompat = { enabled: true };
    // The SDK's own client: the global fetch is fine here, it is the SDK that is proving the example.
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ legacyCompat }), new RestTransportFactory({ legacyCompat })],
      cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
    });
    let client: Client;

    beforeAll(async () => {
      agent = await startExampleA2aAgent({ version });
      client = await factory.createFromUrl(agent.baseUrl);
    });
    afterAll(() => agent.close());

    it("publishes its card at /.well-known/agent-card.json, in the version's shape", async () => {
      const raw = (await (await fetch(`${agent.baseUrl}/.well-known/agent-card.json`)).json()) as Record<
        string,
        unknown
      >;
      if (version === "0.3") {
        expect(raw).toMatchObject({
          protocolVersion: "0.3.0",
          url: `${agent.baseUrl}/a2a`,
          preferredTransport: "JSONRPC",
        });
      } else {
        expect(raw.supportedInterfaces).toEqual([
          { url: `${agent.baseUrl}/a2a`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
        ]);
      }
      expect(client.protocolVersion).toBe(version);
      const card = await client.getAgentCard();
      expect(card).toMatchObject({ name: "Acme refunds assistant", capabilities: { streaming: true } });
    });

    it("asks to confirm a refund in a task that needs input, and finishes it in the same task when answered", async () => {
      const first = asTask(
        await client.sendMessage(request(userMessage("Order A-100 arrived broken. I want my money back."))),
      );
      expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(textOf(first.status?.message?.parts)).toBe(
        "Order A-100 is delivered (42.5 EUR). Would you like me to refund the full amount?",
      );
      expect(first.contextId).not.toBe("");
      expect(first.artifacts).toEqual([]);

      const second = asTask(
        await client.sendMessage(
          request(userMessage("Yes, refund the full amount.", { contextId: first.contextId, taskId: first.id })),
        ),
      );
      expect(second).toMatchObject({ id: first.id, contextId: first.contextId });
      expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(second.artifacts.map((a) => [a.artifactId, textOf(a.parts)])).toEqual([
        ["answer", "Done: refund R-1 for 42.5 on order A-100 is queued."],
        ["refund-receipt", ""],
      ]);
      expect(second.artifacts[1]!.parts[0]!.content).toEqual({
        $case: "data",
        value: { order_id: "A-100", amount: 42.5, refund_id: "R-1", status: "queued" },
      });
      expect(agent.contexts.get(first.contextId)!.taskIds).toEqual(["", first.id]);
    });

    it("keeps a context across tasks: a new task in the same context sees the conversation", async () => {
      const first = asTask(await client.sendMessage(request(userMessage("Where is order A-100?"))));
      expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(first.artifacts[0]!.parts)).toBe("Order A-100 is delivered (42.5 EUR).");
      const second = asTask(
        await client.sendMessage(request(userMessage("Yes, refund the full amount.", { contextId: first.contextId }))),
      );
      expect(second.id).not.toBe(first.id);
      expect(second.contextId).toBe(first.contextId);
      expect(textOf(second.artifacts[0]!.parts)).toBe("Done: refund R-1 for 42.5 on order A-100 is queued.");
      expect(agent.contexts.get(first.contextId)!.taskIds).toEqual(["", ""]);
    });

    it("answers the version's wire format, as another implementation would send it", async () => {
      const body =
        version === "0.3"
          ? {
              method: "message/send",
              params: {
                message: {
                  kind: "message",
                  role: "user",
                  messageId: "m-1",
                  parts: [{ kind: "text", text: "Refund order Z-999 please." }],
                },
              },
            }
          : {
              method: "SendMessage",
              params: {
                message: { role: "ROLE_USER", messageId: "m-1", parts: [{ text: "Refund order Z-999 please." }] },
              },
            };
      const response = await fetch(`${agent.baseUrl}/a2a`, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": version },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, ...body }),
      });
      const answer = (await response.json()) as { id: number; result: Record<string, any> };
      expect(answer.id).toBe(7);
      if (version === "0.3") {
        expect(answer.result).toMatchObject({ kind: "task", status: { state: "completed" } });
        expect(answer.result.artifacts[0].parts).toEqual([
          { kind: "text", text: "I could not find order Z-999. No refund has been issued." },
        ]);
      } else {
        expect(answer.result.task).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" } });
        expect(answer.result.task.artifacts[0].parts).toEqual([
          { text: "I could not find order Z-999. No refund has been issued.", mediaType: "text/plain" },
        ]);
      }
    });

    it("streams a task: its submission, the work, the answer as an artifact, then completion", async () => {
      const events: StreamResponse[] = [];
      for await (const event of client.sendMessageStream(request(userMessage("Refund order Z-999 please.")))) {
        events.push(event);
      }
      const kinds = events.map((e) => e.payload?.$case);
      expect(kinds[0]).toBe("task");
      expect(kinds).toContain("artifactUpdate");
      const states = events.flatMap((e) =>
        e.payload?.$case === "statusUpdate" ? [e.payload.value.status?.state] : [],
      );
      expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
      const artifact = events.find((e) => e.payload?.$case === "artifactUpdate")!.payload!.value as {
        artifact: { parts: Part[] };
      };
      expect(textOf(artifact.artifact.parts)).toBe("I could not find order Z-999. No refund has been issued.");
    });

    it("ends a task failed, rejected, canceled or auth-required when told to", async () => {
      for (const [behaviour, state] of [
        ["fail", TaskState.TASK_STATE_FAILED],
        ["reject", TaskState.TASK_STATE_REJECTED],
        ["cancel", TaskState.TASK_STATE_CANCELED],
        ["auth-required", TaskState.TASK_STATE_AUTH_REQUIRED],
      ] as const) {
        // The SDK reads the card relative to the base URL, as a folder: hence the trailing slash.
        const misbehaving = await factory.createFromUrl(`${agent.baseUrlFor([behaviour])}/`);
        const task = asTask(await misbehaving.sendMessage(request(userMessage("Refund order A-100."))));
        expect({ behaviour, state: task.status?.state }).toEqual({ behaviour, state });
        expect(textOf(task.status?.message?.parts)).not.toBe("");
      }
    });
  },
);
