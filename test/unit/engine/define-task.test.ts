import { describe, expect, it } from "@jest/globals";
import { z } from "zod";
import { defineTask } from "../../../server/engine/define-task.js";
import type { TaskContext } from "../../../server/engine/worker.js";

const context = {
  job: { job_id: "job_1", task: "execute_run" },
  signal: new AbortController().signal,
} as unknown as TaskContext;

describe("a task's payload", () => {
  it("reaches the task parsed by its schema", async () => {
    const seen: unknown[] = [];
    const task = defineTask(z.object({ run_id: z.string() }), async (payload) => void seen.push(payload));
    await task({ run_id: "run_1", stray: true }, context);
    expect(seen).toEqual([{ run_id: "run_1" }]);
  });

  it("that it cannot read fails the attempt, saying which task and what is wrong, and the task never runs", async () => {
    let ran = false;
    const task = defineTask(z.object({ run_id: z.string() }), async () => void (ran = true));
    await expect(task({ run_id: 42 }, context)).rejects.toThrow(
      /^The execute_run job's payload cannot be read: .*run_id/s,
    );
    expect(ran).toBe(false);
  });
});
