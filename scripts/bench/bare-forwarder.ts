/**
 * bench:relay's floor for the relay's forwarding work: a node:http server that takes the relay's
 * request envelope, turns it into the upstream's chat-completions request, POSTs it with undici
 * and answers the completion — what the relay listener does with every statement, check, limit
 * and record taken away. No database, no capability, no validation: never a thing to deploy, only
 * the best a relay written in Node could do on this machine, measured in the same run.
 * Env: UPSTREAM_ENDPOINT, UPSTREAM_CREDENTIAL_FILE, PORT. Anything but a POST is a 404 (how the bench sees it is up).
 */
import fs from "node:fs";
import http from "node:http";
import { Agent } from "undici";

const endpoint = new URL(process.env.UPSTREAM_ENDPOINT!);
const credential = fs.readFileSync(process.env.UPSTREAM_CREDENTIAL_FILE!, "utf8").trim();
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128 });

type TEnvelope = { request: { messages: { role: string; content: string }[]; maxTokens?: number } };
type TCompletion = { choices: { message: { content: string } }[] };

const server = http.createServer((req, res) => {
  if (req.method !== "POST") return void res.writeHead(404).end();
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let envelope: TEnvelope;
    try {
      envelope = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TEnvelope;
    } catch {
      return void res.writeHead(400).end();
    }
    const { request } = envelope;
    agent
      .request({
        origin: endpoint.origin,
        path: endpoint.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "bench-model",
          messages: request.messages,
          max_tokens: request.maxTokens,
          stream: false,
        }),
      })
      .then((response) => response.body.json() as Promise<TCompletion>)
      .then((completion) => {
        const payload = JSON.stringify({ completion: { content: completion.choices[0]!.message.content } });
        res
          .writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) })
          .end(payload);
      })
      .catch(() => res.writeHead(502).end());
  });
});
server.listen(Number(process.env.PORT), "127.0.0.1");
