/**
 * `GET /api/metrics` on the running system: Prometheus text behind the bearer token that
 * `schoolcore metrics token` shows; anything else is 401 and reveals nothing.
 */
import { expect, test } from "@playwright/test";
import { cliJson } from "./cli";

test("the metrics endpoint answers a scraper with the token and refuses one without", async ({ request }) => {
  const { token } = cliJson<{ token: string }>(["metrics", "token"]);
  const refused = await request.get("/api/metrics");
  expect(refused.status()).toBe(401);
  expect(await refused.text()).not.toContain("schoolcore_");
  expect(
    (await request.get("/api/metrics", { headers: { Authorization: "Bearer scm_not-the-token-at-all" } })).status(),
  ).toBe(401);

  const scraped = await request.get("/api/metrics", { headers: { Authorization: `Bearer ${token}` } });
  expect(scraped.status()).toBe(200);
  expect(scraped.headers()["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  const body = await scraped.text();
  for (const name of [
    "schoolcore_tasks",
    "schoolcore_machines_live",
    "schoolcore_machines_quarantined",
    "schoolcore_spend_month_committed_micros",
    "schoolcore_spend_ceiling_micros",
    "schoolcore_worker_heartbeat_age_seconds",
    "schoolcore_task_step_duration_seconds",
    "schoolcore_machine_slots_taken",
    "schoolcore_machines_in_use",
  ]) {
    expect(body).toContain(`# TYPE ${name} `);
  }
});
