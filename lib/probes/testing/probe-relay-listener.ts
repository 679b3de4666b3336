/**
 * For probe tests: the real relay listener (lib/relay/relay-server.ts, the server `npm run relay`
 * runs) on a free loopback port, and the environment that points P2's relay route at it. P2 always
 * checks that route and fails when nothing answers there, so a probe test starts one.
 */
import type { Db } from "../../db/client";
import type { TEnv } from "../../env";
import { startRelayServer, type TRelayServer } from "../../relay/relay-server";

export type TProbeRelayListener = TRelayServer & { envFor(env: TEnv): TEnv };

export async function startProbeRelayListener(db: Db): Promise<TProbeRelayListener> {
  const server = await startRelayServer({ db, host: "127.0.0.1", port: 0 });
  return {
    ...server,
    envFor: (env) => ({ ...env, HOSTNAME: "127.0.0.1", RELAY_PORT: server.port, RELAY_PUBLIC_URL: undefined }),
  };
}
