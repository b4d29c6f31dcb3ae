// Unit tests of the client's parts that need no server: retries, problem kinds,
// batch cuts; and, against a small local HTTP server, that every attempt of a
// call carries one signed Idempotency-Key.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { LinooneClient, LinooneProblem } from "../src/index.js";
import { maxBatchBodyBytes, splitBatches } from "../src/batch.js";
import { problemKind } from "../src/problem.js";
import { type Attempt, backoff, NetworkError, retryAfterMs, withRetries } from "../src/retry.js";

const policy = { attempts: 4, baseDelayMs: 100, maxDelayMs: 1000 };

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Attempt<unknown> {
  const ok = status < 300;
  return { data: ok ? body : undefined, error: ok ? undefined : body, response: new Response(null, { status, headers }) };
}

function problem(status: number, code: string) {
  return { type: `urn:linoone:problem:${code}`, title: "t", status, detail: "d" };
}

/** Runs withRetries over answers (a NetworkError thrown for "drop"), recording the waits. */
async function retries(answers: (Attempt<unknown> | "drop")[], deadline?: number) {
  const waits: number[] = [];
  let sent = 0;
  const send = async () => {
    const a = answers[Math.min(sent++, answers.length - 1)]!;
    if (a === "drop") throw new NetworkError(new Error("socket hang up"));
    return a;
  };
  const sleep = async (ms: number) => {
    waits.push(ms);
  };
  try {
    const res = await withRetries("POST /shorten", policy, { deadline }, send, sleep);
    return { res, sent, waits };
  } catch (error) {
    return { error, sent, waits };
  }
}

describe("withRetries", () => {
  it("retries no answer, 429 and 5xx until an answer", async () => {
    const r = await retries(["drop", answer(503, problem(503, "persist-unavailable")), answer(502, { message: "x" }), answer(201, { token: "t" })]);
    assert.equal(r.sent, 4);
    assert.deepEqual(r.res?.data, { token: "t" });
    r.waits.forEach((w, i) => {
      const d = Math.min(1000, 100 * 2 ** i);
      assert.ok(w >= d / 2 && w <= d, `wait ${i + 1}: ${w} ms, want ${d / 2} to ${d}`);
    });
  });
  it("waits what Retry-After asks", async () => {
    const r = await retries([answer(429, { message: "slow down" }, { "Retry-After": "3" }), answer(201, {})]);
    assert.deepEqual(r.waits, [3000]);
  });
  it("does not retry a refusal", async () => {
    for (const [status, code] of [[400, "target-url-scheme"], [422, "target-url-blocked"], [403, "signature-invalid"], [503, "idempotency-unavailable"]] as const) {
      const r = await retries([answer(status, problem(status, code)), answer(201, {})]);
      assert.equal(r.sent, 1, code);
      assert.ok(r.error instanceof LinooneProblem && r.error.code === code, String(r.error));
    }
  });
  it("gives up after its attempts with the last problem", async () => {
    const r = await retries([answer(503, problem(503, "token-space-busy"))]);
    assert.equal(r.sent, 4);
    assert.ok(r.error instanceof LinooneProblem && r.error.kind === "unavailable");
    assert.match(String(r.error), /sent 4 times/);
  });
  it("never sleeps past the deadline", async () => {
    const r = await retries([answer(503, problem(503, "persist-unavailable"), { "Retry-After": "30" })], Date.now() + 10_000);
    assert.equal(r.sent, 1);
    assert.deepEqual(r.waits, []);
    assert.match(String(r.error), /no time left/);
  });
  it("leaves a Retry-After longer than a minute to the caller", async () => {
    const r = await retries([answer(429, {}, { "Retry-After": "3600" })]);
    assert.equal(r.sent, 1);
    assert.ok(r.error instanceof LinooneProblem && r.error.kind === "throttled");
  });
});

describe("backoff and Retry-After", () => {
  it("backs off within half and all of the doubled delay, capped", () => {
    for (let n = 1; n <= 40; n++) {
      const d = Math.min(1000, 100 * 2 ** (n - 1));
      for (let k = 0; k < 50; k++) {
        const w = backoff(policy, n);
        assert.ok(w >= d / 2 && w <= d, `backoff(${n}) = ${w}`);
      }
    }
  });
  it("reads seconds and HTTP dates", () => {
    const now = Date.parse("Tue, 01 Dec 2026 10:00:00 GMT");
    const cases: [string | null, number][] = [[null, 0], ["3", 3000], [" 120 ", 120_000], ["-1", 0], ["soon", 0],
      ["Tue, 01 Dec 2026 10:00:10 GMT", 10_000], ["Tue, 01 Dec 2026 09:59:00 GMT", 0]];
    for (const [v, want] of cases) assert.equal(retryAfterMs(v, now), want, String(v));
  });
});

describe("LinooneProblem", () => {
  it("names the family of every problem type", () => {
    const cases: [string, number, string][] = [
      ["target-url-scheme", 400, "target-invalid"], ["target-url-too-long", 400, "target-invalid"],
      ["target-url-self", 400, "target-invalid"], ["target-url-blocked", 422, "target-blocked"],
      ["not-found", 404, "not-found"], ["signature-invalid", 403, "unauthorized"],
      ["idempotency-key-reused", 422, "idempotency-key-reused"], ["idempotency-key-invalid", 400, "invalid-request"],
      ["unknown-field", 400, "invalid-request"], ["stats-window-order", 400, "invalid-request"],
      ["body-too-large", 413, "invalid-request"], ["persist-unavailable", 503, "unavailable"],
      ["internal-error", 500, "unavailable"], ["idempotency-unavailable", 503, "unavailable"],
      ["method-not-allowed", 405, "other"],
    ];
    for (const [code, status, kind] of cases) assert.equal(problemKind(`urn:linoone:problem:${code}`, status), kind, code);
    // API Gateway's own answers carry no type.
    assert.equal(problemKind("", 403), "unauthorized");
    assert.equal(problemKind("", 404), "other");
    assert.equal(problemKind("", 429), "throttled");
    assert.equal(problemKind("", 504), "unavailable");
  });
});

describe("splitBatches", () => {
  const urls = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
  const bodyBytes = (ts: string[]) => new TextEncoder().encode(JSON.stringify({ items: ts.map((target_url) => ({ target_url })) })).length;
  const cases: [string, string[], number[]][] = [
    ["none", [], []],
    ["a full batch", urls(1000, (i) => `https://example.com/${i}`), [1000]],
    ["2,500", urls(2500, (i) => `https://example.com/${i}`), [1000, 1000, 500]],
    ["long non-ASCII", urls(1000, (i) => `https://example.com/${i}/` + "€".repeat(2000)), [694, 306]],
    ["one too long for any body", ["https://a.example/", "x".repeat(5 << 20), "https://b.example/"], [1, 1, 1]],
  ];
  for (const [name, targets, sizes] of cases) {
    it(name, () => {
      const parts = splitBatches(targets);
      assert.deepEqual(parts.map((p) => p.end - p.start), sizes);
      parts.forEach((p, i) => {
        assert.equal(p.start, i === 0 ? 0 : parts[i - 1]!.end);
        const n = p.end - p.start;
        assert.ok(n === 1 || bodyBytes(targets.slice(p.start, p.end)) <= maxBatchBodyBytes, `batch ${i} over 4 MiB`);
        if (p.end < targets.length && n < 1000) {
          assert.ok(bodyBytes(targets.slice(p.start, p.end + 1)) > maxBatchBodyBytes, `batch ${i} cut early`);
        }
      });
    });
  }
});

describe("LinooneClient against a fake API", () => {
  it("sends every attempt of a call with one signed Idempotency-Key", async () => {
    const seen: IncomingMessage[] = [];
    const statuses = [503, 503, 201];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(req);
      const status = statuses[Math.min(seen.length - 1, statuses.length - 1)]!;
      res.writeHead(status, { "Content-Type": status < 300 ? "application/json" : "application/problem+json" });
      res.end(JSON.stringify(status < 300 ? { token: "7BTadEDkJ8", short_url: "https://s.example/7BTadEDkJ8" } : problem(status, "persist-unavailable")));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new LinooneClient({
        endpoint: `http://127.0.0.1:${port}`, accessKeyId: "AKIDCLIENTTEST", secretAccessKey: "client-test-secret",
        retry: { baseDelayMs: 1, maxDelayMs: 2 },
      });
      const u = await client.shorten("https://example.com/");
      assert.deepEqual(u, { token: "7BTadEDkJ8", short_url: "https://s.example/7BTadEDkJ8", replayed: false });
      assert.equal(seen.length, 3);
      const key = seen[0]!.headers["idempotency-key"];
      assert.match(String(key), /^linoone-ts-/);
      for (const req of seen) {
        assert.equal(req.headers["idempotency-key"], key);
        assert.match(String(req.headers.authorization), /\/us-east-1\/execute-api\/aws4_request, SignedHeaders=[^,]*idempotency-key/);
      }
    } finally {
      server.close();
    }
  });
});
