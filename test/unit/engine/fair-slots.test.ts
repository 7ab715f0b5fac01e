import { describe, expect, it } from "@jest/globals";
import { makeFairSlots } from "../../../server/engine/fair-slots.js";

/** A piece of work that holds its slot until the test lets it go. */
function holder() {
  let release!: () => void;
  let started = false;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { work: async () => void ((started = true), await done), release: () => release(), started: () => started };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("fair slots", () => {
  it("gives a freed slot to the waiting key that holds the fewest, not to the key that asked first", async () => {
    const slots = makeFairSlots({ total: 2 });
    const a = [holder(), holder(), holder(), holder()];
    const b = holder();
    const runs = a.map((h) => slots.run("a", h.work));
    await settle();
    const runB = slots.run("b", b.work);
    await settle();
    expect(a.map((h) => h.started())).toEqual([true, true, false, false]);
    expect(b.started()).toBe(false);
    a[0]!.release();
    await settle();
    expect(b.started()).toBe(true);
    expect(a[2]!.started()).toBe(false);
    for (const h of [...a, b]) h.release();
    await Promise.all([...runs, runB]);
    expect(slots.held.size).toBe(0);
  });

  it("keeps a key to its cap, and lets another key use the rest", async () => {
    const slots = makeFairSlots({ total: 3, perKey: 1 });
    const a = [holder(), holder()];
    const b = holder();
    const runs = [...a.map((h) => slots.run("a", h.work)), slots.run("b", b.work)];
    await settle();
    expect([a[0]!.started(), a[1]!.started(), b.started()]).toEqual([true, false, true]);
    expect(Object.fromEntries(slots.held)).toEqual({ a: 1, b: 1 });
    a[0]!.release();
    await settle();
    expect(a[1]!.started()).toBe(true);
    for (const h of [...a, b]) h.release();
    await Promise.all(runs);
  });

  it("frees the slot of work that fails", async () => {
    const slots = makeFairSlots({ total: 1 });
    await expect(slots.run("a", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(slots.run("a", async () => "next")).resolves.toBe("next");
  });
});
