import { describe, expect, it } from "vitest";
import { SETTING_SCHEMAS } from "@/lib/settings/setting-schemas";
import { DEFAULT_TASK_LIMITS } from "@/lib/contract/limits";
import { FORM_SETTING_KEYS, fieldsOf, humanBytes, initialTextOf, settingValueOf } from "./setting-form-model";

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
    expect(settingValueOf("spend.ceilings", { monthlyGlobalMicros: "12.5", monthlyPerTaskMicros: "", globalMicros: "50", perTaskMicros: "0.5" })).toEqual({
      monthlyGlobalMicros: 12_500_000,
      monthlyPerTaskMicros: null,
      globalMicros: 50_000_000,
      perTaskMicros: 500_000,
    });
    expect(settingValueOf("guest.agent", { command: "node\n  /tmp/a.mjs \n\n" })).toEqual({ command: ["node", "/tmp/a.mjs"] });
  });

  it("leave text that is not a number as text, so the schema names the field", () => {
    const parsed = SETTING_SCHEMAS["task.limits"].schema.safeParse(settingValueOf("task.limits", { ...Object.fromEntries(fieldsOf("task.limits").map((f) => [f.name, initialTextOf(f, DEFAULT_TASK_LIMITS)])), cpus: "lots", memoryMb: "1" }));
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join("."))).toEqual(["cpus", "memoryMb"]);
  });

  it("submit only the fields of the chosen kind", () => {
    expect(settingValueOf("relay.upstream", { kind: "scripted", scriptFile: "/x.json", endpoint: "https://e", maxResponseBytes: "2048" })).toEqual({ kind: "scripted", scriptFile: "/x.json", maxResponseBytes: 2048 });
  });

  it("shows bytes in human units", () => {
    expect(humanBytes(64 * 1024 * 1024)).toBe("64 MiB");
    expect(humanBytes(262144)).toBe("256 KiB");
    expect(humanBytes(1000)).toBe("1000 bytes");
  });
});
