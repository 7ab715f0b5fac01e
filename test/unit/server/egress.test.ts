import { createServer } from "node:http";
import { BlockList, type AddressInfo } from "node:net";
import { describe, expect, it } from "@jest/globals";
import { makeEgressPolicy } from "../../../server/net/egress.js";
import { sendOutbound } from "../../../server/net/http-request.js";
import { waitFor } from "../../helpers/wait.js";

describe("egress policy", () => {
  const open = makeEgressPolicy();
  /** Loopback opened, as the tests' own servers need it. */
  const local = makeEgressPolicy({ allowlist: ["127.0.0.1"] });

  it.each([
    "169.254.169.254",
    "169.254.1.1",
    "100.100.100.200",
    "[fe80::1]",
    "[fd00:ec2::254]",
    "0.0.0.0",
    "metadata.google.internal",
    "[::ffff:169.254.169.254]",
    "[::ffff:a9fe:a9fe]",
    "[64:ff9b::a9fe:a9fe]",
    "[::a9fe:a9fe]",
    "[2002:a9fe:a9fe::1]",
    "[fd20:ce::254]",
  ])("always refuses %s", (host) => {
    expect(open.checkHost(host)).toBeDefined();
  });

  it.each(["10.1.2.3", "192.168.1.10", "agent.internal", "[fd12::1]"])(
    "allows private and named hosts by default: %s",
    (host) => {
      expect(open.checkHost(host)).toBeUndefined();
    },
  );

  it.each([
    "127.0.0.1",
    "127.8.9.10",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::ffff:0:7f00:1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
    "localhost",
    "agent.localhost",
    "LOCALHOST.",
  ])("refuses this machine and tunnels by default, saying it is not allowed: %s", (host) => {
    expect(open.checkHost(host)).toMatch(/^not allowed: /);
  });

  it("opens this machine, and only it, to a process that runs as its user (assure test)", () => {
    const user = makeEgressPolicy({ thisMachineOpen: true });
    for (const host of ["127.0.0.1", "[::1]", "localhost", "agent.localhost", "[::ffff:127.0.0.1]"]) {
      expect({ host, refusal: user.checkHost(host) }).toEqual({ host, refusal: undefined });
    }
    // Tunnels and cloud metadata stay closed.
    for (const host of ["[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "169.254.169.254", "metadata.google.internal"]) {
      expect(user.checkHost(host)).toMatch(/^not allowed: /);
    }
  });

  it.each([
    "metadata.google.internal.",
    "METADATA.GOOGLE.INTERNAL",
    "instance-data.",
    "[::ffff:0:a9fe:a9fe]",
    "[::ffff:0:169.254.169.254]",
  ])("refuses metadata names and forms however written: %s", (host) => {
    expect(open.checkHost(host)).toMatch(/^not allowed: .*metadata/);
  });

  it("refuses this machine's own addresses, unless the allowlist opens them", () => {
    const own = new BlockList();
    own.addAddress("10.20.30.40");
    expect(makeEgressPolicy({ own }).checkHost("10.20.30.40")).toMatch(/this machine/);
    expect(makeEgressPolicy({ own, allowlist: ["10.20.30.40"] }).checkHost("10.20.30.40")).toBeUndefined();
    const loopbackOpen = makeEgressPolicy({ allowlist: ["127.0.0.1", "localhost"] });
    expect(loopbackOpen.checkHost("127.0.0.1")).toBeUndefined();
    expect(loopbackOpen.checkHost("localhost")).toBeUndefined();
    expect(loopbackOpen.checkHost("[::ffff:0:a9fe:a9fe]")).toMatch(/metadata/);
  });

  it("checks resolved addresses at connect time, so a name cannot point at metadata or this machine", async () => {
    const lookup = (policy: typeof open, host: string) =>
      new Promise<unknown>((resolve) =>
        (policy.lookup as any)(host, { all: true }, (error: unknown, addresses: unknown) =>
          resolve(error ?? addresses),
        ),
      );
    // A name that resolves to loopback is refused when connecting, whatever it is called.
    expect(String(await lookup(open, "localhost"))).toContain("not allowed");
    const loopbackOpen = makeEgressPolicy({ allowlist: ["127.0.0.1", "::1"] });
    expect(await lookup(loopbackOpen, "localhost")).toEqual(
      expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]),
    );
    const restricted = makeEgressPolicy({ allowlist: ["10.0.0.0/8"] });
    const refused = await new Promise<unknown>((resolve) =>
      (restricted.lookup as any)("localhost", {}, (error: unknown) => resolve(error)),
    );
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
      const response = await sendOutbound(local, { url: `http://127.0.0.1:${port}/models`, timeoutMs: 1000 });
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
      await expect(sendOutbound(local, { url: `http://127.0.0.1:${port}/models`, timeoutMs: 200 })).rejects.toThrow(
        /200 ms/,
      );
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
      const calls = [1, 2, 3].map(() => sendOutbound(local, { url, timeoutMs: 30_000, signal: controller.signal }));
      await waitFor(() => arrived === 3, "the three exchanges to reach the server");
      controller.abort(new Error("worker stopping"));
      for (const call of calls) await expect(call).rejects.toThrow("worker stopping");
      await expect(sendOutbound(local, { url, timeoutMs: 30_000, signal: controller.signal })).rejects.toThrow(
        "worker stopping",
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
