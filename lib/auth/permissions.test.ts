import { describe, expect, it } from "vitest";
import { ACTIONS } from "../contract/actions";
import { can, parseRoles, ROLE_PERMISSIONS } from "./permissions";
import type { Actor } from "../contract/actor";

const actor = (roles: string[]): Actor => ({ userId: "u", email: "e@x", roles: parseRoles(roles) });

describe("can", () => {
  it.each(ACTIONS.map((a) => [a]))(
    "%s: teachers may only review and edit their profile; operators may do everything else",
    (action) => {
      expect(can(actor(["teacher"]), action)).toBe(action.startsWith("review.") || action.startsWith("profile."));
      expect(can(actor(["operator"]), action)).toBe(!action.startsWith("review."));
      expect(can(actor(["teacher", "operator"]), action)).toBe(true);
    },
  );

  it("fails closed for no actor, no roles and unknown roles", () => {
    for (const action of ACTIONS) {
      expect(can(null, action)).toBe(false);
      expect(can(actor([]), action)).toBe(false);
      expect(can(actor(["admin", "root"]), action)).toBe(false);
    }
  });

  it("re-verification has its own permission, the operator's alone", () => {
    expect(ROLE_PERMISSIONS.operator).toContain("task.reverify");
    expect(ROLE_PERMISSIONS.teacher as readonly string[]).not.toContain("task.reverify");
    expect(can(actor(["teacher"]), "task.reverify")).toBe(false);
    expect(can(actor(["operator"]), "task.reverify")).toBe(true);
  });

  it("every permission in the table is a known action", () => {
    for (const actions of Object.values(ROLE_PERMISSIONS)) for (const a of actions) expect(ACTIONS).toContain(a);
  });
});

describe("parseRoles", () => {
  it("drops anything that is not a role", () => {
    expect(parseRoles(["teacher", "admin", 3, null, "operator"])).toEqual(["teacher", "operator"]);
    expect(parseRoles("operator")).toEqual([]);
  });
});
