import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ACTIONS } from "../contract/actions";
import { ZSubstrateConfigSchema } from "../contract/dispatch-setting";
import { defineSetting } from "./define-setting";
import { SETTING_PAGES, type TSettingPage } from "./setting-pages";
import {
  digestInputKeysOf,
  FORM_SETTING_KEYS,
  SETTING_DEFINITIONS,
  SETTING_KEYS,
  settingPagesIndex,
  settingPanelsOf,
  type TSettingRegistry,
} from "./setting-registry";

const PAGES = Object.keys(SETTING_PAGES) as TSettingPage[];

describe("a setting is defined once", () => {
  it("every setting names a known page and permission, and a form or the controls that edit it instead", () => {
    for (const key of SETTING_KEYS) {
      const definition = SETTING_DEFINITIONS[key];
      expect(PAGES, key).toContain(definition.page);
      expect(ACTIONS, key).toContain(definition.permission);
      expect(definition.label.length, key).toBeGreaterThan(0);
      if ("form" in definition.editor) expect(definition.editor.form.fields.length, key).toBeGreaterThan(0);
      else expect(definition.editor.editedBy.length, key).toBeGreaterThan(20);
    }
  });

  it("each page's panels are exactly the form settings defined on it, in definition order, once", () => {
    const panelled = PAGES.flatMap((page) => settingPanelsOf(page).map((panel) => [panel.key, page] as const));
    expect(panelled.map(([key]) => key)).toEqual(FORM_SETTING_KEYS);
    for (const [key, page] of panelled)
      expect(SETTING_DEFINITIONS[key as keyof typeof SETTING_DEFINITIONS].page).toBe(page);
    // the two without a form: the gate opens only with probe evidence; protected paths are per repository
    expect(SETTING_KEYS.filter((key) => !FORM_SETTING_KEYS.includes(key as never)).sort()).toEqual([
      "dispatch",
      "publish.protectedPaths",
    ]);
  });

  it("the Settings index lists every setting under its page", () => {
    const index = settingPagesIndex();
    expect(index.map((page) => page.href)).toEqual(PAGES);
    expect(index.flatMap((page) => page.settings).sort()).toEqual(
      SETTING_KEYS.map((key) => SETTING_DEFINITIONS[key].label).sort(),
    );
  });

  it("the digest inputs are the settings that say which part of the configuration they decide", () => {
    expect(digestInputKeysOf().sort()).toEqual(
      [
        "guest.agent",
        "guest.image",
        "probe.externalTargets",
        "task.limits",
        "task.overrideMaxima",
        "verifier.image",
      ].sort(),
    );
  });

  it("every part of the substrate configuration is decided by exactly one setting, or by the environment", () => {
    const parts = Object.keys(ZSubstrateConfigSchema.shape);
    const claimed = digestInputKeysOf().flatMap(
      (key) => SETTING_DEFINITIONS[key as keyof typeof SETTING_DEFINITIONS].digest ?? [],
    );
    // v is the format; substrate and network.relayEndpoint are the environment's; network's channel follows task.limits
    expect([...claimed, "v", "substrate", "network"].sort()).toEqual(parts.sort());
  });

  it("a new setting, defined in one place, is on its page's panels, in the index, and a digest input when it says so", () => {
    const registry: TSettingRegistry = {
      ...(SETTING_DEFINITIONS as unknown as TSettingRegistry),
      "test.newThing": defineSetting({
        schema: z.object({ seconds: z.number().int().min(1) }).strict(),
        default: { seconds: 5 },
        label: "A new thing for the test",
        permission: "limits.edit",
        page: "/operator/limits",
        digest: ["limits"],
        editor: {
          description: "Shown above its form.",
          form: { fields: [{ kind: "number", unit: "s", name: "seconds", label: "Seconds" }] },
        },
      }),
    };
    expect(settingPanelsOf("/operator/limits", registry).at(-1)).toEqual({
      key: "test.newThing",
      label: "A new thing for the test",
      description: "Shown above its form.",
      form: { fields: [{ kind: "number", unit: "s", name: "seconds", label: "Seconds" }] },
      default: { seconds: 5 },
    });
    expect(settingPanelsOf("/operator/spend", registry).map((panel) => panel.key)).not.toContain("test.newThing");
    expect(settingPagesIndex(registry).find((page) => page.href === "/operator/limits")!.settings).toContain(
      "A new thing for the test",
    );
    expect(digestInputKeysOf(registry)).toContain("test.newThing");
  });
});
