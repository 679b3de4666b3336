/**
 * Settings cannot exfiltrate host secrets (issue 27, item 5): the relay upstream's credentialFile
 * must be in DATA_DIR/credentials/ and never one of School-Core's own secrets, and its endpoint
 * https unless loopback — refused when the setting is written, and again when a stored value is
 * used ("Test upstream", a relay call), so a secret never leaves as a header.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureCredentialsDir } from "../secrets/credential-file";
import { createTestDatabase } from "../testing/test-database";
import { testRelayUpstream } from "./check-relay-upstream";
import { startFakeOpenAiServer } from "./testing/fake-upstream-servers";
import { closeUpstreamAgents } from "./transports/http-upstream";
import { setRelayUpstream } from "./upstream-setting";

const SESSION_SECRET = "session-signing-secret-do-not-send-0123456789";

describe("the relay upstream's credential file and endpoint", async () => {
  const { db } = await createTestDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-policy-"));
  const credentials = ensureCredentialsDir(dataDir);
  const sessionSecretFile = path.join(dataDir, "nextauth-secret");
  await fs.writeFile(sessionSecretFile, `${SESSION_SECRET}\n`, { mode: 0o600 });
  await fs.mkdir(path.join(dataDir, "secrets"), { mode: 0o700 });
  await fs.writeFile(path.join(dataDir, "secrets", "substrate-token"), "smk_local_substrate_token_0123\n", {
    mode: 0o600,
  });
  const goodFile = path.join(credentials, "openai-key");
  await fs.writeFile(goodFile, "sk-good-credential-0123456789\n", { mode: 0o600 });
  // The fake upstream accepts the session secret as its key: any leak would be a success here.
  const upstream = await startFakeOpenAiServer({ credential: SESSION_SECRET, reply: () => "ok" });
  afterAll(async () => {
    await closeUpstreamAgents();
    await upstream.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  const openai = (credentialFile: string, endpoint = upstream.endpoint) => ({
    kind: "openai",
    endpoint,
    model: "m",
    credentialFile,
  });
  const sentSecret = () => upstream.requests.some((r) => r.authorization?.includes(SESSION_SECRET));

  it("setting credentialFile to DATA_DIR/nextauth-secret (or another secret, or anything outside credentials/) is refused on write", async () => {
    for (const file of [
      sessionSecretFile,
      path.join(dataDir, "secrets", "substrate-token"),
      path.join(credentials, "..", "nextauth-secret"),
      "/etc/passwd",
      "relative/key",
    ]) {
      await expect(
        setRelayUpstream({ db, value: openai(file), via: "test", dataDir, reason: "test setup" }),
        file,
      ).rejects.toMatchObject({
        code: expect.stringMatching(/^(CREDENTIAL_FILE_REFUSED|VALIDATION_FAILED)$/),
      });
    }
    await expect(
      setRelayUpstream({ db, value: openai(sessionSecretFile), via: "test", dataDir, reason: "test setup" }),
    ).rejects.toMatchObject({
      code: "CREDENTIAL_FILE_REFUSED",
      message: expect.stringContaining("not inside DATA_DIR/credentials/"),
      details: { fieldErrors: { credentialFile: [expect.stringContaining("DATA_DIR/credentials/")] } },
    });
    expect(await db.operatorSetting.count({ where: { key: "relay.upstream" } })).toBe(0);
    await expect(
      setRelayUpstream({ db, value: openai(goodFile), via: "test", dataDir, reason: "test setup" }),
    ).resolves.toMatchObject({
      credentialFile: goodFile,
    });
  });

  it("an http endpoint that is not loopback is refused on write", async () => {
    for (const endpoint of [
      "http://upstream.example.invalid/v1/chat/completions",
      "http://192.168.1.10:8080/v1",
      "http://[fd00::1]/v1",
    ]) {
      await expect(
        setRelayUpstream({ db, value: openai(goodFile, endpoint), via: "test", dataDir, reason: "test setup" }),
      ).rejects.toMatchObject({
        code: "VALIDATION_FAILED",
        message: expect.stringContaining("must be https (plain http only to loopback"),
      });
    }
  });

  it("a stored value pointing at a secret is refused when used: Test upstream sends nothing", async () => {
    // Written past the registry, as a value stored before the rule would be.
    await db.operatorSetting.update({ where: { key: "relay.upstream" }, data: { value: openai(sessionSecretFile) } });
    const before = upstream.requests.length;
    const result = await testRelayUpstream({ db, dataDir }, { actor: null });
    expect(result).toMatchObject({ isOk: false, error: expect.stringContaining("is refused") });
    expect(upstream.requests.length).toBe(before);
    expect(sentSecret()).toBe(false);
  });

  it("a symlink inside the credentials directory pointing at a secret is refused at use time (and a hard link)", async () => {
    const link = path.join(credentials, "looks-like-a-key");
    await setRelayUpstream({ db, value: openai(link), via: "test", dataDir, reason: "test setup" }); // nothing there yet: accepted on write
    await fs.symlink(sessionSecretFile, link);
    const viaLink = await testRelayUpstream({ db, dataDir }, { actor: null });
    expect(viaLink).toMatchObject({
      isOk: false,
      error: expect.stringContaining("real path is not inside DATA_DIR/credentials/"),
    });
    // A symlink that stays inside the directory is fine; one to a hard link of a secret is not.
    await fs.rm(link);
    const hard = path.join(credentials, "hard-link");
    await fs.link(sessionSecretFile, hard);
    await fs.symlink(hard, link);
    const viaHardLink = await testRelayUpstream({ db, dataDir }, { actor: null });
    expect(viaHardLink).toMatchObject({ isOk: false, error: expect.stringContaining("School-Core's own secrets") });
    // The credentials directory itself replaced by a link to DATA_DIR is refused as well.
    await fs.rm(credentials, { recursive: true });
    await fs.symlink(dataDir, credentials);
    await db.operatorSetting.update({
      where: { key: "relay.upstream" },
      data: { value: openai(path.join(credentials, "nextauth-secret")) },
    });
    const viaDirLink = await testRelayUpstream({ db, dataDir }, { actor: null });
    expect(viaDirLink).toMatchObject({ isOk: false, error: expect.stringContaining("is not a directory") });
    expect(sentSecret()).toBe(false);
  });
});
