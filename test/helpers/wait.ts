/**
 * Waits until `condition` holds (it may be async), checking every `everyMs`, and fails after
 * `timeoutMs` naming what it waited for. Tests wait on conditions, never for a fixed time.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  what: string,
  { timeoutMs = 10_000, everyMs = 10 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
