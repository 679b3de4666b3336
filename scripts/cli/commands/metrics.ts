import { ensureMetricsToken, metricsTokenFile } from "../../../lib/metrics/metrics-token";
import { parseCommandArgs, type Command } from "../context";
import { printResult } from "../output";

export const metricsToken: Command = {
  summary: "print the bearer token for GET /api/metrics (created on first use, kept in DATA_DIR/secrets)",
  usage: "metrics token [--json]",
  example: "schoolcore metrics token   # prints the bearer token for Prometheus' scrape config",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const token = await ensureMetricsToken(context.env.dataDir);
    printResult(context.isJson, { token, file: metricsTokenFile(context.env.dataDir) }, () => token);
  },
};
