import { describe, expect, it } from "vitest";
import { settingFieldErrors } from "@/lib/settings/operator-settings";
import { SETTING_KEYS, SETTING_SCHEMAS } from "@/lib/settings/setting-schemas";
import { DEFAULT_TASK_LIMITS } from "@/lib/contract/limits";
import {
  FORM_SETTING_KEYS,
  fieldsOf,
  formFieldErrorsOf,
  humanBytes,
  initialTextOf,
  isFormSettingKey,
  settingValueOf,
} from "./setting-form-model";

function roundTrip(key: (typeof FORM_SETTING_KEYS)[number], current: unknown) {
  const raw = Object.fromEntries(fieldsOf(key).map((f) => [f.name, initialTextOf(f, current)]));
  return settingValueOf(key, raw);
}

describe("setting forms", () => {
  it("turn every default back into the same value (the form edits what is stored)", () => {
    for (const key of FORM_SETTING_KEYS) {
      const definition = SETTING_SCHEMAS[key];
      if (definition.default === null) continue;
      expect(definition.schema.parse(roundTrip(key, definition.default)), key).toEqual(definition.default);
    }
  });

  it("edit nested paths, dollars and lines", () => {
    expect(settingValueOf("task.limits", { "relay.maxRequests": "40", cpus: "2" })).toEqual({ v: 1, cpus: 2, relay: { maxRequests: 40 } });
    expect(
      settingValueOf("spend.ceilings", { monthlyGlobalMicros: "12.5", monthlyPerTaskMicros: "", globalMicros: "50", perTaskMicros: "0.5" }),
    ).toEqual({
      monthlyGlobalMicros: 12_500_000,
      monthlyPerTaskMicros: null,
      globalMicros: 50_000_000,
      perTaskMicros: 500_000,
    });
    expect(settingValueOf("guest.agent", { command: "node\n  /tmp/a.mjs \n\n" })).toEqual({ command: ["node", "/tmp/a.mjs"] });
  });

  it("edit the model price in dollars per million tokens and the relay token budget (relay.pricing, task.limits)", () => {
    const schema = SETTING_SCHEMAS["relay.pricing"].schema;
    expect(schema.parse(settingValueOf("relay.pricing", { inputMicrosPerMTok: "3", outputMicrosPerMTok: "15.25" }))).toEqual({
      inputMicrosPerMTok: 3_000_000,
      outputMicrosPerMTok: 15_250_000,
    });
    expect(initialTextOf(fieldsOf("relay.pricing")[1]!, { inputMicrosPerMTok: 0, outputMicrosPerMTok: 800_000 })).toBe("0.8");
    const refused = schema.safeParse(settingValueOf("relay.pricing", { inputMicrosPerMTok: "-1", outputMicrosPerMTok: "cheap" }));
    expect(refused.success).toBe(false);
    expect(Object.keys(formFieldErrorsOf("relay.pricing", settingFieldErrors(refused.error!.issues))).sort()).toEqual([
      "inputMicrosPerMTok",
      "outputMicrosPerMTok",
    ]);
    expect(settingValueOf("task.limits", { "relay.maxTokens": "500000" })).toEqual({ v: 1, relay: { maxTokens: 500_000 } });
  });

  it("leave text that is not a number as text, so the schema names the field", () => {
    const parsed = SETTING_SCHEMAS["task.limits"].schema.safeParse(
      settingValueOf("task.limits", {
        ...Object.fromEntries(fieldsOf("task.limits").map((f) => [f.name, initialTextOf(f, DEFAULT_TASK_LIMITS)])),
        cpus: "lots",
        memoryMb: "1",
      }),
    );
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join("."))).toEqual(["cpus", "memoryMb"]);
  });

  it("submit only the fields of the chosen kind", () => {
    expect(
      settingValueOf("relay.upstream", { kind: "scripted", scriptFile: "/x.json", endpoint: "https://e", maxResponseBytes: "2048" }),
    ).toEqual({ kind: "scripted", scriptFile: "/x.json", maxResponseBytes: 2048 });
  });

  it("edit a nullable cap and a per-substrate map (machines.concurrency)", () => {
    const schema = SETTING_SCHEMAS["machines.concurrency"].schema;
    expect(schema.parse(settingValueOf("machines.concurrency", { maxMachines: "", bySubstrate: "" }))).toEqual({
      maxMachines: null,
      bySubstrate: {},
    });
    expect(
      schema.parse(settingValueOf("machines.concurrency", { maxMachines: " 8 ", bySubstrate: "local = 4\n\n  smolcloud=12 " })),
    ).toEqual({ maxMachines: 8, bySubstrate: { local: 4, smolcloud: 12 } });
    expect(roundTrip("machines.concurrency", { maxMachines: 3, bySubstrate: { local: 2 } })).toEqual({
      maxMachines: 3,
      bySubstrate: { local: 2 },
    });
    const refused = schema.safeParse(settingValueOf("machines.concurrency", { maxMachines: "0", bySubstrate: "local = many\nhosted" }));
    expect(refused.success).toBe(false);
    const errors = formFieldErrorsOf("machines.concurrency", settingFieldErrors(refused.error!.issues));
    expect(Object.keys(errors).sort()).toEqual(["bySubstrate", "maxMachines"]);
    expect(errors.bySubstrate!.map((m) => m.split(":")[0])).toEqual(["local", "hosted"]);
  });

  it("edit a boolean as a choice of two (review.separationOfDuties)", () => {
    expect(settingValueOf("review.separationOfDuties", { enabled: "false" })).toEqual({ enabled: false });
    expect(roundTrip("review.separationOfDuties", { enabled: true })).toEqual({ enabled: true });
    expect(
      SETTING_SCHEMAS["review.separationOfDuties"].schema.safeParse(settingValueOf("review.separationOfDuties", { enabled: "maybe" }))
        .success,
    ).toBe(false);
  });

  it("edit the identity provider's groups one per line, and its two choices (auth.oidc)", () => {
    const value = settingValueOf("auth.oidc", {
      groupsClaim: "groups",
      teacherGroups: "teachers\n /staff/teachers \n",
      operatorGroups: "",
      refuseWithoutGroup: "true",
      localSignIn: "operatorsOnly",
    });
    expect(SETTING_SCHEMAS["auth.oidc"].schema.parse(value)).toEqual({
      groupsClaim: "groups",
      teacherGroups: ["teachers", "/staff/teachers"],
      operatorGroups: [],
      refuseWithoutGroup: true,
      localSignIn: "operatorsOnly",
    });
    expect(roundTrip("auth.oidc", SETTING_SCHEMAS["auth.oidc"].default)).toEqual(SETTING_SCHEMAS["auth.oidc"].default);
  });

  it("edit records one per line, naming the line of each problem (probe.externalTargets)", () => {
    const schema = SETTING_SCHEMAS["probe.externalTargets"].schema;
    const targets = [
      { label: "metadata", protocol: "tcp", host: "169.254.169.254", port: 80 },
      { label: "resolver", protocol: "dns", host: "192.0.2.53", port: 53, name: "example.org" },
    ];
    expect(
      schema.parse(
        settingValueOf("probe.externalTargets", {
          targets: "metadata, tcp, 169.254.169.254, 80\n resolver,dns,192.0.2.53,53,example.org \n",
        }),
      ),
    ).toEqual({ targets });
    expect(roundTrip("probe.externalTargets", { targets })).toEqual({ targets });
    expect(initialTextOf(fieldsOf("probe.externalTargets")[0]!, { targets })).toBe(
      "metadata, tcp, 169.254.169.254, 80\nresolver, dns, 192.0.2.53, 53, example.org",
    );
    const refused = schema.safeParse(
      settingValueOf("probe.externalTargets", {
        targets: "ok, tcp, 192.0.2.1, 80\nlocal, tcp, 127.0.0.1, http\nx, tcp, 192.0.2.2, 1, a.b, surplus",
      }),
    );
    expect(refused.success).toBe(false);
    const errors = formFieldErrorsOf("probe.externalTargets", settingFieldErrors(refused.error!.issues));
    expect(Object.keys(errors)).toEqual(["targets"]);
    expect(errors.targets!.map((m) => m.split(":")[0]).sort()).toEqual(["line 2, host", "line 2, port", "line 3"]);
  });

  it("covers every registry setting, or says where it is edited instead", () => {
    // dispatch opens only through the probe gate (Probes page); protected paths are edited per
    // repository on the Repositories page (the default patterns with `schoolcore settings set`).
    const editedElsewhere = ["dispatch", "publish.protectedPaths"];
    expect(SETTING_KEYS.filter((key) => !isFormSettingKey(key) && !editedElsewhere.includes(key))).toEqual([]);
  });

  it("shows bytes in human units", () => {
    expect(humanBytes(64 * 1024 * 1024)).toBe("64 MiB");
    expect(humanBytes(262144)).toBe("256 KiB");
    expect(humanBytes(1000)).toBe("1000 bytes");
  });
});
