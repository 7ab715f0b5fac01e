import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { asyncListener } from "./async-listener.js";
import { readBody } from "../../examples/agent/server.js";

export type JudgeMode =
  /** Scores 1 when the conversation shows a confirmed refund (`refund R-1`), else 0. */
  | { kind: "rule" }
  /** Scores from this list in turn, cycling. */
  | { kind: "sequence"; scores: number[] }
  /** Answers with text that is not the {score, reason} JSON contract. */
  | { kind: "garbage" };

/** An OpenAI-compatible judge endpoint for tests: real HTTP, a scripted scorer, requests recorded. */
export async function startJudgeServer(initial: JudgeMode = { kind: "rule" }) {
  let mode = initial;
  let calls = 0;
  const requests: Record<string, any>[] = [];
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.parse(await readBody(req)) as Record<string, any>;
    requests.push({ ...body, authorization: req.headers.authorization });
    const transcript = String(body.messages?.at(-1)?.content ?? "");
    let content: string;
    if (mode.kind === "garbage") content = "I think it went well, maybe 8/10.";
    else {
      const score =
        mode.kind === "rule" ? (/refund R-1/.test(transcript) ? 1 : 0) : mode.scores[calls % mode.scores.length]!;
      content = JSON.stringify({
        score,
        reason: score >= 0.5 ? "The refund was issued and confirmed." : "No confirmed refund.",
      });
    }
    calls++;
    res.writeHead(200, { "content-type": "application/json" });
    // Tokens as a model would report them, about four characters each.
    const prompt_tokens = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
    const completion_tokens = Math.ceil(content.length / 4);
    const usage = { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
    res.end(
      JSON.stringify({
        id: `judge-${calls}`,
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage,
      }),
    );
  };
  const server = createServer(asyncListener(answer));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    setMode(next: JudgeMode) {
      mode = next;
      calls = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
