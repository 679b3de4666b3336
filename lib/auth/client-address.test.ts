import { describe, expect, it } from "vitest";
import { addressBucket, parseTrustedProxies, resolveClientAddress } from "./client-address";

describe("resolveClientAddress", () => {
  it("with no trusted proxies, ignores X-Forwarded-For: a client cannot choose the address it is throttled under", () => {
    expect(resolveClientAddress({ forwardedFor: "1.2.3.4", socketAddress: "203.0.113.9", trustedProxies: [] })).toBe(
      "203.0.113.9",
    );
    // Socket unknown (Next.js route handlers): no address at all rather than the spoofable header.
    expect(resolveClientAddress({ forwardedFor: "1.2.3.4", socketAddress: undefined, trustedProxies: [] })).toBeNull();
  });

  it("behind a trusted proxy, takes the first untrusted hop from the right (a spoofed left-hand entry is ignored)", () => {
    const trustedProxies = parseTrustedProxies("10.0.0.1, 10.0.0.2");
    expect(
      resolveClientAddress({
        forwardedFor: "6.6.6.6, 198.51.100.7, 10.0.0.2",
        socketAddress: "10.0.0.1",
        trustedProxies,
      }),
    ).toBe("198.51.100.7");
    expect(
      resolveClientAddress({ forwardedFor: "198.51.100.7", socketAddress: "::ffff:10.0.0.1", trustedProxies }),
    ).toBe("198.51.100.7");
  });

  it("a request that does not come from a trusted proxy is its socket address, whatever it claims", () => {
    expect(
      resolveClientAddress({
        forwardedFor: "10.0.0.1, 1.1.1.1",
        socketAddress: "198.51.100.99",
        trustedProxies: ["10.0.0.1"],
      }),
    ).toBe("198.51.100.99");
  });

  it("drops values that are not addresses", () => {
    expect(
      resolveClientAddress({
        forwardedFor: "<script>, 198.51.100.7",
        socketAddress: "10.0.0.1",
        trustedProxies: ["10.0.0.1"],
      }),
    ).toBe("198.51.100.7");
  });
});

describe("addressBucket", () => {
  it("an IPv4 address is its own bucket (a dual-stack ::ffff: form too)", () => {
    expect(addressBucket("198.51.100.7")).toBe("198.51.100.7");
    expect(addressBucket("::ffff:198.51.100.7")).toBe("198.51.100.7");
  });

  it("IPv6 addresses count by their /64 prefix, however they are written", () => {
    const bucket = "2001:db8:5:6::/64";
    for (const address of [
      "2001:db8:5:6::1",
      "2001:db8:5:6:ffff:ffff:ffff:ffff",
      "2001:0DB8:0005:0006:0000:0000:0000:0001",
      "2001:db8:5:6:1::",
      "2001:db8:5:6::1.2.3.4",
      "2001:db8:5:6::1%eth0",
    ]) {
      expect(addressBucket(address), address).toBe(bucket);
    }
    expect(addressBucket("2001:db8:5:7::1")).toBe("2001:db8:5:7::/64");
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("fe80::1")).toBe("fe80:0:0:0::/64");
  });

  it("leaves a value that is no address as it is (it was bounded by the resolver)", () => {
    expect(addressBucket("unknown")).toBe("unknown");
  });
});
