import { describe, expect, it } from "vitest";
import { formDataToObject } from "./form-input";

describe("formDataToObject", () => {
  it("gives one string per field, an array for a repeated name, and drops React's own action fields", () => {
    const form = new FormData();
    form.append("taskId", "t-1");
    form.append("roles", "teacher");
    form.append("roles", "operator");
    form.append("$ACTION_ID_abc", "");
    form.append("$ACTION_REF_1", "");
    expect(formDataToObject(form)).toEqual({ taskId: "t-1", roles: ["teacher", "operator"] });
  });

  it("keeps an empty field as the empty string (the schema decides what that means)", () => {
    const form = new FormData();
    form.append("reason", "");
    expect(formDataToObject(form)).toEqual({ reason: "" });
  });
});
