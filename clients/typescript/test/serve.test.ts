// Tests against a real `linoone serve`, which the Go test TestTypeScriptClient
// (client/typescript_test.go, run by make test) starts and describes in these
// environment variables.
import assert from "node:assert/strict";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { AwsClient } from "aws4fetch";
import { type BatchResult, LinooneClient, LinooneProblem } from "../src/index.js";

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests through go test ./client -run TestTypeScriptClient (make test), which starts serve`);
  return v;
}

const endpoint = env("LINOONE_TEST_ENDPOINT");
const resolver = env("LINOONE_TEST_RESOLVER_URL");
const credentials = { accessKeyId: env("LINOONE_TEST_ACCESS_KEY_ID"), secretAccessKey: env("LINOONE_TEST_SECRET_ACCESS_KEY") };
const blockedDomain = env("LINOONE_TEST_BLOCKED_DOMAIN");
const run = Date.now();

const client = (opts: Partial<ConstructorParameters<typeof LinooneClient>[0]> = {}) =>
  new LinooneClient({ endpoint, ...credentials, ...opts });

async function refusal(p: Promise<unknown>): Promise<LinooneProblem> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof LinooneProblem, `threw ${String(e)}, want a LinooneProblem`);
    return e;
  }
  assert.fail("no refusal");
}

describe("LinooneClient against serve", () => {
  it("shortens, inspects and reads stats", async () => {
    const c = client();
    const target = `https://example.com/ts/${run}`;
    const u = await c.shorten(target);
    assert.equal(u.short_url, `${resolver}/${u.token}`);
    assert.equal(u.replayed, false);
    const link = await c.inspect(u.token);
    assert.equal(link.target_url, target);
    const stats = await c.stats(u.token);
    assert.equal(stats.clicks, 0);
    assert.equal(stats.by_day.length, 30);
    const week = await c.stats(u.token, { from: "2026-11-24", to: "2026-11-30" });
    assert.deepEqual(week.by_day.map((d) => d.date), ["2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"]);
  });

  it("returns the first short URL for a key used again, and refuses it for another target", async () => {
    const c = client();
    const idempotencyKey = `order-${run}`;
    const first = await c.shorten("https://example.com/orders/4711", { idempotencyKey });
    const again = await c.shorten("https://example.com/orders/4711", { idempotencyKey });
    assert.equal(again.token, first.token);
    assert.deepEqual([first.replayed, again.replayed], [false, true]);
    const p = await refusal(c.shorten("https://example.com/orders/4712", { idempotencyKey }));
    assert.equal(p.kind, "idempotency-key-reused");
  });

  it("throws every refusal as a LinooneProblem of its kind", async () => {
    const cases: [string, () => Promise<unknown>, string, string][] = [
      ["a target-url rule", () => client().shorten("ftp://example.com/file"), "target-invalid", "target-url-scheme"],
      ["the deny list", () => client().shorten(`https://www.${blockedDomain}/`), "target-blocked", "target-url-blocked"],
      ["an unknown token", () => client().inspect("AAAAAAAAAA"), "not-found", "not-found"],
      ["a wrong secret", () => client({ secretAccessKey: "not-the-secret" }).shorten("https://example.com/"), "unauthorized", "signature-invalid"],
      ["a window in the wrong order", () => client().stats("AAAAAAAAAA", { from: "2026-11-30", to: "2026-11-01" }), "invalid-request", "stats-window-order"],
    ];
    for (const [name, call, kind, code] of cases) {
      const p = await refusal(call());
      assert.deepEqual([p.kind, p.code], [kind, code], name);
      assert.equal(p.type, `urn:linoone:problem:${code}`);
    }
  });

  it("issues a batch in input order, a refused URL failing alone, and replays it under its key", async () => {
    const c = client({ batchConcurrency: 2 });
    const targets = Array.from({ length: 1500 }, (_, i) => `https://example.com/ts-batch/${run}/${i}`);
    targets[1200] = "javascript:alert(1)";
    const idempotencyKey = `ts-batch-${run}`;
    const first = await c.shortenBatch(targets, { idempotencyKey });
    const again = await c.shortenBatch(targets, { idempotencyKey });
    first.forEach((r: BatchResult, i) => {
      const b = again[i]!;
      if (i === 1200) {
        assert.ok(r.error instanceof LinooneProblem && r.error.kind === "target-invalid", String(r.error));
        return;
      }
      assert.ok(r.error === undefined && r.target_url === targets[i] && r.replayed === false, `result ${i}: ${JSON.stringify(r)}`);
      assert.ok(b.token === r.token && b.replayed === true, `result ${i} again: ${JSON.stringify(b)}`);
    });
    for (const i of [0, 999, 1000, 1499]) assert.equal((await c.inspect(first[i]!.token!)).target_url, targets[i]);
  });

  describe("after a dropped answer", () => {
    let proxy: Server;
    let proxyURL: string;
    const exchanges: { path: string; key: string; status: number; body: string; dropped: boolean }[] = [];
    before(async () => {
      // Forwards to serve (Host header and all: the signature covers it) and, for
      // the first request, closes the connection once serve has answered.
      proxy = createServer(async (req: IncomingMessage, res) => {
        const body = await readAll(req);
        const upstream = new URL(endpoint);
        const answer = await new Promise<{ status: number; headers: IncomingMessage["headers"]; body: Buffer }>((resolve, reject) => {
          const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, async (r) => {
            resolve({ status: r.statusCode ?? 0, headers: r.headers, body: await readAll(r) });
          });
          out.on("error", reject);
          out.end(body);
        });
        const dropped = exchanges.length === 0;
        exchanges.push({ path: req.url ?? "", key: String(req.headers["idempotency-key"]), status: answer.status, body: answer.body.toString(), dropped });
        if (dropped) {
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      });
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
      proxyURL = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    after(() => proxy.close());

    it("retries under the same key and gets the stored short URL: one short URL in Persist", async () => {
      const target = `https://example.com/ts-dropped/${run}`;
      const u = await new LinooneClient({ endpoint: proxyURL, ...credentials, retry: { baseDelayMs: 10, maxDelayMs: 20 } }).shorten(target);
      assert.equal(exchanges.length, 2);
      const [dropped, retried] = exchanges as [(typeof exchanges)[0], (typeof exchanges)[0]];
      assert.ok(dropped.dropped && dropped.status === 201, JSON.stringify(dropped));
      assert.equal(retried.key, dropped.key);
      assert.equal(u.token, JSON.parse(dropped.body).token);
      assert.equal(u.replayed, true);
      assert.equal(await persistCount(target), 1);
    });
  });

  describe("shortenOrFallback", () => {
    let silent: Server;
    let silentURL: string;
    before(async () => {
      silent = createServer(() => {}); // reads requests and never answers
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      silentURL = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    });
    after(() => {
      silent.closeAllConnections();
      silent.close();
    });

    it("returns the short URL when it comes in time", async () => {
      const r = await client().shortenOrFallback(`https://example.com/copy/${run}`);
      assert.equal(r.shortened, true);
      assert.equal(r.url, `${resolver}/${r.token}`);
    });
    it("returns the URL given when the API refuses it", async () => {
      const r = await client().shortenOrFallback("ftp://example.com/file");
      assert.deepEqual([r.shortened, r.url], [false, "ftp://example.com/file"]);
      assert.ok(r.error instanceof LinooneProblem && r.error.kind === "target-invalid");
    });
    it("returns the URL given when no answer comes within the budget", async () => {
      const c = new LinooneClient({ endpoint: silentURL, ...credentials });
      const r = await c.shortenOrFallback("https://example.com/slow", { timeoutMs: 200 });
      assert.deepEqual([r.shortened, r.url], [false, "https://example.com/slow"]);
      assert.equal((r.error as Error).name, "TimeoutError");
    });
    it("returns the URL given when nothing listens", async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const c = new LinooneClient({ endpoint: `http://127.0.0.1:${port}`, ...credentials, retry: { baseDelayMs: 10, maxDelayMs: 20 } });
      const r = await c.shortenOrFallback("https://example.com/down");
      assert.deepEqual([r.shortened, r.url], [false, "https://example.com/down"]);
      assert.ok(r.error instanceof Error);
    });
  });
});

/** readAll reads a stream whole (Array.fromAsync arrives in Node 22). */
async function readAll(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks);
}

/** persistCount counts the short_url vertices of target in serve's local Persist, asked with its own pair. */
async function persistCount(target: string): Promise<number> {
  const persist = new AwsClient({
    accessKeyId: env("LINOONE_TEST_PERSIST_ACCESS_KEY_ID"),
    secretAccessKey: env("LINOONE_TEST_PERSIST_SECRET_ACCESS_KEY"),
    service: "execute-api",
    region: "us-east-1",
    retries: 0,
  });
  const res = await persist.fetch(`${env("LINOONE_TEST_PERSIST_URL")}/persist/gremlin`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/vnd.gremlin-v3.0+json" },
    body: JSON.stringify({ gremlin: "g.V().hasLabel('short_url').has('target_url', target).count()", bindings: { target } }),
  });
  const body = (await res.json()) as { result: { data: { "@value": { "@value": number }[] } } };
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.result.data["@value"][0]!["@value"];
}
