import { z } from "zod";
import type { Task, TaskContext } from "./worker.js";

/**
 * A task whose job payload is parsed with its schema before it runs, never cast: a payload it
 * cannot read fails the attempt with what is wrong with it (the job is kept and retried, as on any
 * error, so the work it stands for is not lost while the fault is found).
 */
export function defineTask<Payload extends z.ZodType>(
  payload: Payload,
  run: (payload: z.infer<Payload>, context: TaskContext) => Promise<void>,
): Task {
  return async (raw, context) => {
    const parsed = payload.safeParse(raw);
    if (!parsed.success) {
      throw new Error(`The ${context.job.task} job's payload cannot be read: ${z.prettifyError(parsed.error)}`);
    }
    await run(parsed.data, context);
  };
}
