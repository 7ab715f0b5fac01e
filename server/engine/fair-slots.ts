/**
 * Slots shared fairly among keys (projects): at most `total` held at once, at most `perKey` by
 * one key. A freed slot goes to the waiting key that holds the fewest, so one project's run asking
 * for every slot cannot keep another's waiting; within a key, first come, first served.
 */
export function makeFairSlots({ total, perKey = total }: { total: number; perKey?: number }) {
  const held = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  let inUse = 0;

  const holding = (key: string) => held.get(key) ?? 0;
  function take(key: string): void {
    inUse++;
    held.set(key, holding(key) + 1);
  }
  function release(key: string): void {
    inUse--;
    const left = holding(key) - 1;
    if (left > 0) held.set(key, left);
    else held.delete(key);
    grantWaiting();
  }
  function grantWaiting(): void {
    while (inUse < total) {
      let next: string | undefined;
      for (const key of waiting.keys()) {
        if (holding(key) < perKey && (next === undefined || holding(key) < holding(next))) next = key;
      }
      if (next === undefined) return;
      const queue = waiting.get(next)!;
      const wake = queue.shift()!;
      if (queue.length === 0) waiting.delete(next);
      take(next);
      wake();
    }
  }

  return {
    /** Runs `work` in a slot of `key`'s, once one is free for it. */
    async run<T>(key: string, work: () => Promise<T>): Promise<T> {
      await new Promise<void>((resolve) => {
        waiting.set(key, [...(waiting.get(key) ?? []), resolve]);
        grantWaiting();
      });
      try {
        return await work();
      } finally {
        release(key);
      }
    },
    /** Slots held now, by key. */
    get held(): ReadonlyMap<string, number> {
      return held;
    },
  };
}

export type FairSlots = ReturnType<typeof makeFairSlots>;
