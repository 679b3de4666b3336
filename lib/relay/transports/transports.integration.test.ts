import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ZRelayUpstreamSettingSchema, type TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { startFakeAnthropicServer, startFakeOpenAiServer } from "../testing/fake-upstream-servers";
import { createAnthropicTransport } from "./anthropic-transport";
import { closeUpstreamAgents } from "./http-upstream";
import { createOpenAiTransport } from "./openai-transport";
import { chooseScriptedCompletion, createScriptedTransport, loadScriptFile } from "./scripted-transport";
import { ensureCredentialsDir } from "../../secrets/credential-file";

/** The test's DATA_DIR: credential files live in its credentials/ directory. */
const dir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-transport-"));
const credentialFile = path.join(ensureCredentialsDir(dir), "credential");
await fs.writeFile(credentialFile, "test-credential-0123456789\n");
const openai = await startFakeOpenAiServer({
  credential: "test-credential-0123456789",
  reply: (m) => `openai saw ${m.length} messages, last: ${m.at(-1)?.content}`,
});
const anthropic = await startFakeAnthropicServer({
  credential: "test-credential-0123456789",
  reply: (m) => `anthropic saw ${m.map((x) => x.role).join(",")}`,
});

afterAll(async () => {
  await closeUpstreamAgents();
  await openai.close();
  await anthropic.close();
  await fs.rm(dir, { recursive: true, force: true });
});

function openAiSetting(overrides: Record<string, unknown> = {}) {
  return ZRelayUpstreamSettingSchema.parse({
    kind: "openai",
    endpoint: openai.endpoint,
    model: "gpt-test",
    credentialFile,
    requestTimeoutMs: 1000,
    ...overrides,
  }) as Extract<TRelayUpstreamSetting, { kind: "openai" }>;
}

const MESSAGES = [
  { role: "system" as const, content: "be brief" },
  { role: "user" as const, content: "hi" },
];

describe("OpenAI-compatible transport (real HTTP, loopback fake speaking the wire protocol)", () => {
  it("sends the operator-pinned model and credential, and returns the completion", async () => {
    openai.mode = "ok";
    const result = await createOpenAiTransport(openAiSetting(), { dataDir: dir }).complete({ messages: MESSAGES, maxTokens: 33 });
    expect(result).toEqual({ content: "openai saw 2 messages, last: hi", inputTokens: 11, outputTokens: 7 });
    const seen = openai.requests.at(-1)!;
    expect(seen.authorization).toBe("Bearer test-credential-0123456789");
    expect(seen.body).toMatchObject({ model: "gpt-test", max_tokens: 33, messages: MESSAGES });
  });

  it.each([
    ["status500", /http_status 500/],
    ["malformed", /malformed_response/],
    ["close", /connection_failed/],
    ["hang", /timeout/],
  ] as const)("maps upstream %s to RELAY_UPSTREAM_FAILED without upstream text", async (mode, reason) => {
    openai.mode = mode;
    const error = await createOpenAiTransport(openAiSetting(), { dataDir: dir })
      .complete({ messages: MESSAGES })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "RELAY_UPSTREAM_FAILED", message: expect.stringMatching(reason) });
    expect(String((error as Error).message)).not.toMatch(/exploded|127\.0\.0\.1|test-credential/);
    openai.mode = "ok";
  });

  it("refuses an oversized streamed answer whole (RELAY_TOO_LARGE), reading no more than the cap", async () => {
    openai.mode = "oversized";
    await expect(
      createOpenAiTransport(openAiSetting({ maxResponseBytes: 64 * 1024 }), { dataDir: dir }).complete({ messages: MESSAGES }),
    ).rejects.toMatchObject({ code: "RELAY_TOO_LARGE" });
    openai.mode = "ok";
  });

  it("reads the credential file at call time: a rotated file takes effect, a missing or unsafe one fails closed", async () => {
    const rotating = path.join(dir, "credentials", "rotating");
    await fs.writeFile(rotating, "wrong-credential-aaaaaaaa");
    const transport = createOpenAiTransport(openAiSetting({ credentialFile: rotating }), { dataDir: dir });
    const error = await transport.complete({ messages: MESSAGES }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "RELAY_UPSTREAM_FAILED", message: expect.stringMatching(/http_status 401/) });
    expect((error as Error).message).not.toContain("wrong-credential");
    await fs.writeFile(rotating, "test-credential-0123456789");
    expect((await transport.complete({ messages: MESSAGES })).content).toMatch(/openai saw/);
    await fs.writeFile(rotating, "test-credential\r\nx-injected: 1");
    await expect(transport.complete({ messages: MESSAGES })).rejects.toMatchObject({
      message: expect.stringMatching(/credential_unavailable/),
    });
    await fs.rm(rotating);
    await expect(transport.complete({ messages: MESSAGES })).rejects.toMatchObject({
      code: "CREDENTIAL_FILE_REFUSED",
      message: expect.stringMatching(/cannot be resolved \(ENOENT\)/),
    });
  });

  it("never follows a redirect to another host", async () => {
    const http = await import("node:http");
    const redirector = http.createServer((_req, res) => {
      res.writeHead(307, { location: `${openai.endpoint}` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    const port = (redirector.address() as { port: number }).port;
    const before = openai.requests.length;
    await expect(
      createOpenAiTransport(openAiSetting({ endpoint: `http://127.0.0.1:${port}/v1/chat/completions` }), { dataDir: dir }).complete({
        messages: MESSAGES,
      }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/http_status 307/),
    });
    expect(openai.requests.length).toBe(before);
    await new Promise((r) => redirector.close(r));
  });
});

describe("Anthropic messages transport", () => {
  const setting = () =>
    ZRelayUpstreamSettingSchema.parse({
      kind: "anthropic",
      endpoint: anthropic.endpoint,
      model: "claude-test",
      credentialFile,
      requestTimeoutMs: 1000,
    }) as Extract<TRelayUpstreamSetting, { kind: "anthropic" }>;

  it("sends x-api-key and anthropic-version, lifts system messages, returns the text", async () => {
    const result = await createAnthropicTransport(setting(), { dataDir: dir }).complete({ messages: MESSAGES });
    expect(result).toEqual({ content: "anthropic saw system,user", inputTokens: 11, outputTokens: 7 });
    const seen = anthropic.requests.at(-1)!;
    expect(seen.apiKey).toBe("test-credential-0123456789");
    expect(seen.authorization).toBeUndefined();
    expect(seen.body).toMatchObject({ model: "claude-test", system: "be brief", messages: [{ role: "user", content: "hi" }] });
  });

  it("maps a 500 to RELAY_UPSTREAM_FAILED", async () => {
    anthropic.mode = "status500";
    await expect(createAnthropicTransport(setting(), { dataDir: dir }).complete({ messages: MESSAGES })).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_FAILED",
    });
    anthropic.mode = "ok";
  });
});

describe("scripted transport", () => {
  it("answers with the first entry whose pattern matches the last user message, else the default", async () => {
    const scriptFile = path.join(dir, "script.json");
    await fs.writeFile(
      scriptFile,
      JSON.stringify({
        default: "no idea",
        entries: [
          { pattern: "add\\(\\)", completion: "first" },
          { pattern: "add", completion: "second" },
        ],
      }),
    );
    const transport = createScriptedTransport({ scriptFile, maxResponseBytes: 1000 });
    expect(await transport.complete({ messages: [{ role: "user", content: "add() is broken" }] })).toEqual({ content: "first" });
    expect(await transport.complete({ messages: [{ role: "user", content: "add is broken" }] })).toEqual({ content: "second" });
    expect(
      await transport.complete({
        messages: [
          { role: "user", content: "add() is broken" },
          { role: "assistant", content: "?" },
          { role: "user", content: "other" },
        ],
      }),
    ).toEqual({ content: "no idea" });
    expect(transport.kind).toBe("scripted");
  });

  it("fails closed on a missing or invalid script and refuses an oversized canned answer", async () => {
    await expect(
      createScriptedTransport({ scriptFile: path.join(dir, "missing.json"), maxResponseBytes: 1000 }).complete({ messages: MESSAGES }),
    ).rejects.toMatchObject({ code: "RELAY_UPSTREAM_FAILED" });
    const bad = path.join(dir, "bad.json");
    await fs.writeFile(bad, JSON.stringify({ default: "x", entries: [{ pattern: "(", completion: "y" }] }));
    await expect(loadScriptFile(bad)).rejects.toMatchObject({ code: "RELAY_UPSTREAM_FAILED" });
    const big = path.join(dir, "big.json");
    await fs.writeFile(big, JSON.stringify({ default: "b".repeat(2000), entries: [] }));
    await expect(
      createScriptedTransport({ scriptFile: big, maxResponseBytes: 1000 }).complete({ messages: MESSAGES }),
    ).rejects.toMatchObject({ code: "RELAY_TOO_LARGE" });
  });

  it("the demo script fixes demo/calculator issue #1 with one whole-file block", async () => {
    const script = await loadScriptFile(path.resolve(import.meta.dirname, "../../demo/scripted-completions.json"));
    const answer = chooseScriptedCompletion(
      script,
      "Issue #1: add() subtracts instead of adding\n\nCalling add(2, 3) returns -1. It should return 5.",
    );
    const blocks = [...answer.matchAll(/^```file (.+)$/gm)].map((m) => m[1]);
    expect(blocks).toEqual(["src/add.js"]);
    expect(answer).toContain("return a + b;");
    expect(answer).not.toContain("return a - b;");
    expect(chooseScriptedCompletion(script, "something unrelated")).toBe(script.default);
  });
});

describe("upstream setting schema", () => {
  it.each([
    [{ kind: "openai", endpoint: "ftp://x/", model: "m", credentialFile: "/c" }],
    [{ kind: "openai", endpoint: "http://user:pw@x/", model: "m", credentialFile: "/c" }],
    [{ kind: "openai", endpoint: "https://x/", model: "m", credentialFile: "relative/path" }],
    [{ kind: "openai", endpoint: "https://x/", model: "m", credentialFile: "/c", credential: "sk-inline" }],
    // The credential goes to the endpoint as a header: plain http only to loopback (issue 27, item 5).
    [{ kind: "openai", endpoint: "http://x/", model: "m", credentialFile: "/c" }],
    [{ kind: "anthropic", endpoint: "http://10.1.2.3:8080/v1/messages", model: "m", credentialFile: "/c" }],
    [{ kind: "openai", endpoint: "http://[2001:db8::1]/v1", model: "m", credentialFile: "/c" }],
    [{ kind: "scripted" }],
    [{ kind: "proxy", endpoint: "http://x/" }],
  ])("refuses %j", (value) => {
    expect(ZRelayUpstreamSettingSchema.safeParse(value).success).toBe(false);
  });

  it.each(["https://api.example.com/v1", "http://127.0.0.1:9/v1", "http://127.200.0.1/v1", "http://localhost:9/v1", "http://[::1]:9/v1"])(
    "accepts %s",
    (endpoint) => {
      expect(ZRelayUpstreamSettingSchema.safeParse({ kind: "openai", endpoint, model: "m", credentialFile: "/c" }).success).toBe(true);
    },
  );

  it("a plain-http non-loopback endpoint that reaches a transport anyway is refused before anything is sent", async () => {
    const setting = { ...openAiSetting(), endpoint: "http://upstream.example.invalid/v1/chat/completions" };
    await expect(createOpenAiTransport(setting, { dataDir: dir }).complete({ messages: MESSAGES })).rejects.toMatchObject({
      code: "ENDPOINT_INSECURE",
      message: expect.stringContaining("must be https"),
    });
  });
});
