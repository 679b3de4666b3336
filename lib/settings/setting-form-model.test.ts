import { describe, expect, it } from "vitest";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import { settingFieldErrors } from "./operator-settings";
import { formatInUnit, formFieldErrorsOf, initialTextOf, settingValueOf } from "./setting-form-model";
import { FORM_SETTING_KEYS, formOf, SETTING_DEFINITIONS, type TFormSettingKey } from "./setting-registry";

function roundTrip(key: TFormSettingKey, current: unknown) {
  const raw = Object.fromEntries(formOf(key).fields.map((f) => [f.name, initialTextOf(f, current)]));
  return settingValueOf(formOf(key), raw);
}

describe("setting forms", () => {
  it("turn every default back into the same value (the form edits what is stored)", () => {
    for (const key of FORM_SETTING_KEYS) {
      const definition = SETTING_DEFINITIONS[key];
      if (definition.default === null) continue;
      expect(definition.schema.parse(roundTrip(key, definition.default)), key).toEqual(definition.default);
    }
  });

  it("edit nested paths, dollars and lines", () => {
    expect(settingValueOf(formOf("task.limits"), { "relay.maxRequests": "40", cpus: "2" })).toEqual({
      v: 1,
      cpus: 2,
      relay: { maxRequests: 40 },
    });
    expect(
      settingValueOf(formOf("spend.ceilings"), {
        monthlyGlobalMicros: "12.5",
        monthlyPerTaskMicros: "",
        globalMicros: "50",
        perTaskMicros: "0.5",
      }),
    ).toEqual({
      monthlyGlobalMicros: 12_500_000,
      monthlyPerTaskMicros: null,
      globalMicros: 50_000_000,
      perTaskMicros: 500_000,
    });
    expect(settingValueOf(formOf("guest.agent"), { command: "node\n  /tmp/a.mjs \n\n" })).toEqual({
      command: ["node", "/tmp/a.mjs"],
    });
  });

  it("edit the model price in dollars per million tokens and the relay token budget (relay.pricing, task.limits)", () => {
    const schema = SETTING_DEFINITIONS["relay.pricing"].schema;
    expect(
      schema.parse(settingValueOf(formOf("relay.pricing"), { inputMicrosPerMTok: "3", outputMicrosPerMTok: "15.25" })),
    ).toEqual({
      inputMicrosPerMTok: 3_000_000,
      outputMicrosPerMTok: 15_250_000,
    });
    expect(
      initialTextOf(formOf("relay.pricing").fields[1]!, { inputMicrosPerMTok: 0, outputMicrosPerMTok: 800_000 }),
    ).toBe("0.8");
    const refused = schema.safeParse(
      settingValueOf(formOf("relay.pricing"), { inputMicrosPerMTok: "-1", outputMicrosPerMTok: "cheap" }),
    );
    expect(refused.success).toBe(false);
    expect(
      Object.keys(formFieldErrorsOf(formOf("relay.pricing"), settingFieldErrors(refused.error!.issues))).sort(),
    ).toEqual(["inputMicrosPerMTok", "outputMicrosPerMTok"]);
    expect(settingValueOf(formOf("task.limits"), { "relay.maxTokens": "500000" })).toEqual({
      v: 1,
      relay: { maxTokens: 500_000 },
    });
  });

  it("leave text that is not a number as text, so the schema names the field", () => {
    const parsed = SETTING_DEFINITIONS["task.limits"].schema.safeParse(
      settingValueOf(formOf("task.limits"), {
        ...Object.fromEntries(formOf("task.limits").fields.map((f) => [f.name, initialTextOf(f, DEFAULT_TASK_LIMITS)])),
        cpus: "lots",
        memoryMb: "1",
      }),
    );
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join("."))).toEqual(["cpus", "memoryMb"]);
  });

  it("submit only the fields of the chosen kind", () => {
    expect(
      settingValueOf(formOf("relay.upstream"), {
        kind: "scripted",
        scriptFile: "/x.json",
        endpoint: "https://e",
        maxResponseBytes: "2048",
      }),
    ).toEqual({ kind: "scripted", scriptFile: "/x.json", maxResponseBytes: 2048 });
  });

  it("edit a nullable cap and a per-substrate map (machines.concurrency)", () => {
    const schema = SETTING_DEFINITIONS["machines.concurrency"].schema;
    expect(schema.parse(settingValueOf(formOf("machines.concurrency"), { maxMachines: "", bySubstrate: "" }))).toEqual({
      maxMachines: null,
      bySubstrate: {},
    });
    expect(
      schema.parse(
        settingValueOf(formOf("machines.concurrency"), {
          maxMachines: " 8 ",
          bySubstrate: "local = 4\n\n  smolcloud=12 ",
        }),
      ),
    ).toEqual({ maxMachines: 8, bySubstrate: { local: 4, smolcloud: 12 } });
    expect(roundTrip("machines.concurrency", { maxMachines: 3, bySubstrate: { local: 2 } })).toEqual({
      maxMachines: 3,
      bySubstrate: { local: 2 },
    });
    const refused = schema.safeParse(
      settingValueOf(formOf("machines.concurrency"), { maxMachines: "0", bySubstrate: "local = many\nhosted" }),
    );
    expect(refused.success).toBe(false);
    const errors = formFieldErrorsOf(formOf("machines.concurrency"), settingFieldErrors(refused.error!.issues));
    expect(Object.keys(errors).sort()).toEqual(["bySubstrate", "maxMachines"]);
    expect(errors.bySubstrate!.map((m) => m.split(":")[0])).toEqual(["local", "hosted"]);
  });

  it("edit a boolean as a choice of two (review.separationOfDuties)", () => {
    expect(settingValueOf(formOf("review.separationOfDuties"), { enabled: "false" })).toEqual({ enabled: false });
    expect(roundTrip("review.separationOfDuties", { enabled: true })).toEqual({ enabled: true });
    expect(
      SETTING_DEFINITIONS["review.separationOfDuties"].schema.safeParse(
        settingValueOf(formOf("review.separationOfDuties"), { enabled: "maybe" }),
      ).success,
    ).toBe(false);
  });

  it("edit the identity provider's groups one per line, and its two choices (auth.oidc)", () => {
    const value = settingValueOf(formOf("auth.oidc"), {
      groupsClaim: "groups",
      teacherGroups: "teachers\n /staff/teachers \n",
      operatorGroups: "",
      refuseWithoutGroup: "true",
      localSignIn: "operatorsOnly",
    });
    expect(SETTING_DEFINITIONS["auth.oidc"].schema.parse(value)).toEqual({
      groupsClaim: "groups",
      teacherGroups: ["teachers", "/staff/teachers"],
      operatorGroups: [],
      refuseWithoutGroup: true,
      localSignIn: "operatorsOnly",
    });
    expect(roundTrip("auth.oidc", SETTING_DEFINITIONS["auth.oidc"].default)).toEqual(
      SETTING_DEFINITIONS["auth.oidc"].default,
    );
  });

  it("edit records one per line, naming the line of each problem (probe.externalTargets)", () => {
    const schema = SETTING_DEFINITIONS["probe.externalTargets"].schema;
    const targets = [
      { label: "metadata", protocol: "tcp", host: "169.254.169.254", port: 80 },
      { label: "resolver", protocol: "dns", host: "192.0.2.53", port: 53, name: "example.org" },
    ];
    expect(
      schema.parse(
        settingValueOf(formOf("probe.externalTargets"), {
          targets: "metadata, tcp, 169.254.169.254, 80\n resolver,dns,192.0.2.53,53,example.org \n",
        }),
      ),
    ).toEqual({ targets });
    expect(roundTrip("probe.externalTargets", { targets })).toEqual({ targets });
    expect(initialTextOf(formOf("probe.externalTargets").fields[0]!, { targets })).toBe(
      "metadata, tcp, 169.254.169.254, 80\nresolver, dns, 192.0.2.53, 53, example.org",
    );
    const refused = schema.safeParse(
      settingValueOf(formOf("probe.externalTargets"), {
        targets: "ok, tcp, 192.0.2.1, 80\nlocal, tcp, 127.0.0.1, http\nx, tcp, 192.0.2.2, 1, a.b, surplus",
      }),
    );
    expect(refused.success).toBe(false);
    const errors = formFieldErrorsOf(formOf("probe.externalTargets"), settingFieldErrors(refused.error!.issues));
    expect(Object.keys(errors)).toEqual(["targets"]);
    expect(errors.targets!.map((m) => m.split(":")[0]).sort()).toEqual(["line 2, host", "line 2, port", "line 3"]);
  });

  it("shows a value in its unit, bytes in binary units", () => {
    expect(formatInUnit(64 * 1024 * 1024, "bytes")).toBe("64 MiB");
    expect(formatInUnit(262144, "bytes")).toBe("256 KiB");
    expect(formatInUnit(1000, "bytes")).toBe("1000 B");
    expect(formatInUnit(30, "s")).toBe("30 s");
    expect(formatInUnit(4, "count")).toBe("4");
  });
});
