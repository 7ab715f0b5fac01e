import { z } from "zod";
import type { EgressPolicy } from "./egress.js";
import {
  firstIssue,
  postJsonCall,
  type AnswerReading,
  type CallOutcome,
  type JsonCallOptions,
  type TokenUsage,
} from "./json-call.js";

/** The part of an OpenAI Chat Completions response that assure relies on, for agents and judges alike. */
export const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          role: z.literal("assistant").optional(),
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().min(1),
                type: z.literal("function").optional(),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
  model: z.string().max(200).nullish(),
  usage: z
    .object({
      prompt_tokens: z.number().int().nonnegative(),
      completion_tokens: z.number().int().nonnegative(),
      total_tokens: z.number().int().nonnegative(),
    })
    .partial()
    .nullish(),
});
export type ChatChoice = z.infer<typeof ChatCompletion>["choices"][number];

export interface ChatAnswer {
  choice: ChatChoice;
  model: string | null;
  usage: TokenUsage | null;
}

export function readChatCompletion(json: unknown): AnswerReading<ChatAnswer> {
  const parsed = ChatCompletion.safeParse(json);
  if (!parsed.success) return { ok: false, message: firstIssue(parsed.error) };
  return {
    ok: true,
    answer: { choice: parsed.data.choices[0]!, model: parsed.data.model ?? null, usage: usageOf(parsed.data.usage) },
  };
}

/** One Chat Completions exchange (`POST {base_url}/chat/completions`), as agents and judges make it. */
export function postChatCompletion(egress: EgressPolicy, options: JsonCallOptions): Promise<CallOutcome<ChatAnswer>> {
  return postJsonCall(egress, options, readChatCompletion);
}

function usageOf(usage: z.infer<typeof ChatCompletion>["usage"]): TokenUsage | null {
  const input = usage?.prompt_tokens ?? null;
  const output = usage?.completion_tokens ?? null;
  const total = usage?.total_tokens ?? (input !== null && output !== null ? input + output : null);
  return total === null ? null : { input_tokens: input, output_tokens: output, total_tokens: total };
}
