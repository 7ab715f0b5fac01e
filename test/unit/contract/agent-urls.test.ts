import { describe, expect, it } from "@jest/globals";
import { compileUrlPattern, fillUrlTemplate, refSlug, templateValues } from "../../../server/contract/index.js";

const SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8";

describe("agent URL templates", () => {
  it("fill {sha}, {short_sha}, {pull_request} and {ref_slug} from a run's source", () => {
    const values = templateValues({
      repository: "acme/refunds",
      commit_sha: SHA,
      ref: "refs/heads/Feature/Refund_Limits",
      pull_request: 42,
    });
    expect(values).toEqual({ sha: SHA, short_sha: "9fceb02", pull_request: "42", ref_slug: "feature-refund-limits" });
    expect(fillUrlTemplate("https://pr-{pull_request}.preview.acme.dev/{short_sha}/v1", values)).toEqual({
      url: "https://pr-42.preview.acme.dev/9fceb02/v1",
    });
  });

  it("name what a source does not give", () => {
    const values = templateValues({ repository: "acme/refunds", commit_sha: SHA });
    expect(fillUrlTemplate("https://pr-{pull_request}.{ref_slug}.acme.dev/v1", values)).toEqual({
      missing: ["pull_request", "ref_slug"],
    });
    expect(fillUrlTemplate("https://{sha}.acme.dev/v1", templateValues(null))).toEqual({ missing: ["sha"] });
  });

  it("slug a branch as a DNS label: lower case, one dash per run of other characters, at most 63 characters", () => {
    expect(refSlug("refs/heads/feat/ÄÖ--x__y")).toBe("feat-x-y");
    expect(refSlug("main")).toBe("main");
    expect(refSlug(`refs/heads/${"a".repeat(80)}`)).toHaveLength(63);
    expect(refSlug("refs/heads/-leading/and-trailing-")).toBe("leading-and-trailing");
  });
});

describe("URL patterns", () => {
  it("match one DNS label, or part of one, per *", () => {
    const matches = compileUrlPattern("https://pr-*.preview.acme.dev/v1")!;
    expect(matches("https://pr-42.preview.acme.dev/v1")).toBe(true);
    expect(matches("https://PR-42.preview.acme.dev/v1/")).toBe(true);
    expect(matches("https://pr-42.evil.preview.acme.dev/v1")).toBe(false);
    expect(matches("https://pr-.preview.acme.dev/v1")).toBe(false);
    expect(matches("https://pr-42.preview.acme.dev.evil.com/v1")).toBe(false);
    expect(matches("https://evil.com/pr-1.preview.acme.dev/v1")).toBe(false);
  });

  it("match one path segment per *, and nothing more", () => {
    const matches = compileUrlPattern("http://previews.internal/*/v1")!;
    expect(matches(`http://previews.internal/${SHA}/v1`)).toBe(true);
    expect(matches("http://previews.internal/a/b/v1")).toBe(false);
    expect(matches("http://previews.internal/v1")).toBe(false);
    expect(matches("http://previews.internal/a/v1/extra")).toBe(false);
  });

  it("hold scheme and port exact, and refuse credentials, queries and fragments", () => {
    const matches = compileUrlPattern("http://*.previews.internal:8080/v1")!;
    expect(matches("http://a.previews.internal:8080/v1")).toBe(true);
    expect(matches("https://a.previews.internal:8080/v1")).toBe(false);
    expect(matches("http://a.previews.internal/v1")).toBe(false);
    expect(matches("http://a.previews.internal:8081/v1")).toBe(false);
    expect(matches("http://user:pw@a.previews.internal:8080/v1")).toBe(false);
    expect(matches("http://a.previews.internal:8080/v1?x=1")).toBe(false);
    expect(compileUrlPattern("https://acme.dev:443/v1")!("https://acme.dev/v1")).toBe(true);
  });

  it("are http or https URLs without query, fragment or credentials", () => {
    for (const bad of [
      "ftp://*.acme.dev",
      "*.acme.dev/v1",
      "https://acme.dev/v1?x=*",
      "https://u:p@acme.dev/v1",
      "not a url",
    ]) {
      expect(compileUrlPattern(bad)).toBeUndefined();
    }
  });
});
