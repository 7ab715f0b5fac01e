import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "@jest/globals";
import { makeEgressPolicy } from "../../../server/net/egress.js";
import { sendOutbound } from "../../../server/net/http-request.js";
import { waitFor } from "../../helpers/wait.js";

describe("egress policy", () => {
  const open = makeEgressPolicy();

  it.each(["169.254.169.254", "169.254.1.1", "100.100.100.200", "[fe80::1]", "[fd00:ec2::254]", "0.0.0.0", "metadata.google.internal", "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]", "[::a9fe:a9fe]", "[2002:a9fe:a9fe::1]", "[fd20:ce::254]"])(
    "always refuses %s",
    (host) => {
      expect(open.checkHost(host)).toBeDefined();
    },
  );

  it.each(["127.0.0.1", "10.1.2.3", "192.168.1.10", "agent.internal", "[::1]"])("allows private and named hosts by default: %s", (host) => {
    expect(open.checkHost(host)).toBeUndefined();
  });

  it("checks resolved addresses at connect time, so a name cannot point at metadata", async () => {
    const lookup = (host: string) =>
      new Promise<unknown>((resolve) => (open.lookup as any)(host, { all: true }, (error: unknown, addresses: unknown) => resolve(error ?? addresses)));
    expect(await lookup("localhost")).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]));
    const restricted = makeEgressPolicy({ allowlist: ["10.0.0.0/8"] });
    const refused = await new Promise<unknown>((resolve) => (restricted.lookup as any)("localhost", {}, (error: unknown) => resolve(error)));
    expect(String(refused)).toContain("not on the egress allowlist");
  });

  it("enforces an allowlist of hosts and CIDRs when one is set", () => {
    const restricted = makeEgressPolicy({ allowlist: ["10.0.0.0/8", "agent.internal", "127.0.0.1"] });
    expect(restricted.checkHost("10.9.9.9")).toBeUndefined();
    expect(restricted.checkHost("127.0.0.1")).toBeUndefined();
    expect(restricted.checkHost("192.168.0.1")).toContain("allowlist");
    expect(restricted.checkHost("169.254.169.254")).toContain("metadata");
  });

  it("does not follow redirects", async () => {
    const server = createServer((_req, res) => res.writeHead(302, { location: "http://169.254.169.254/" }).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await sendOutbound(open, { url: `http://127.0.0.1:${port}/models`, timeoutMs: 1000 });
      expect(response.status).toBe(302);
    } finally {
      server.close();
    }
  });

  it("gives up at the deadline", async () => {
    const server = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await expect(sendOutbound(open, { url: `http://127.0.0.1:${port}/models`, timeoutMs: 200 })).rejects.toThrow(/200 ms/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("ends every exchange in flight when their signal aborts, and refuses to start one after", async () => {
    let arrived = 0;
    const server = createServer(() => void arrived++); // never answers
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/models`);
      const controller = new AbortController();
      const calls = [1, 2, 3].map(() => sendOutbound(open, { url, timeoutMs: 30_000, signal: controller.signal }));
      await waitFor(() => arrived === 3, "the three exchanges to reach the server");
      controller.abort(new Error("worker stopping"));
      for (const call of calls) await expect(call).rejects.toThrow("worker stopping");
      await expect(sendOutbound(open, { url, timeoutMs: 30_000, signal: controller.signal })).rejects.toThrow("worker stopping");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
