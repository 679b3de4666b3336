/**
 * readProfilePage on real PostgreSQL: a teacher sees the events a teacher may receive and no
 * webhooks; an operator sees the webhooks; email shows as configured only with SMTP_URL.
 */
import { describe, expect, it } from "vitest";
import type { Actor } from "../../contract/actor";
import { parseEnv } from "../../env";
import { canReceiveNotification, TASK_NOTIFICATION_EVENTS } from "../../notifications/notification-events";
import { createTestDatabase } from "../../testing/test-database";
import { pageTestDeps } from "../testing/page-actors";
import { readProfilePage } from "./profile-page";

describe("readProfilePage", async () => {
  const { db } = await createTestDatabase();
  const userOf = async (email: string, roles: ("teacher" | "operator")[]): Promise<Actor> => {
    const user = await db.user.create({ data: { email, name: email, passwordHash: "x", roles } });
    return { userId: user.id, email, roles };
  };

  it("shows a teacher the events a teacher receives, and no webhooks", async () => {
    const teacher = await userOf("t-profile@school.invalid", ["teacher"]);
    const page = await readProfilePage(pageTestDeps(db), { actor: teacher });
    expect(page.isOperator).toBe(false);
    expect(page.webhooks).toEqual([]);
    expect(page.events).toEqual(TASK_NOTIFICATION_EVENTS.filter((event) => canReceiveNotification(teacher, event)));
    expect(page.events.length).toBeLessThan(TASK_NOTIFICATION_EVENTS.length);
    expect(page.isEmailConfigured).toBe(false);
  });

  it("shows an operator the webhooks, and email as configured when SMTP_URL is set", async () => {
    const operator = await userOf("o-profile@school.invalid", ["operator"]);
    const deps = { db, env: parseEnv({ DATA_DIR: pageTestDeps(db).env.dataDir, SMTP_URL: "smtp://127.0.0.1:2525" }) };
    const page = await readProfilePage(deps, { actor: operator });
    expect(page.isOperator).toBe(true);
    expect(page.isEmailConfigured).toBe(true);
    expect(page.chosen).toBeDefined();
  });
});
