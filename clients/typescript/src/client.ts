import { AwsClient } from "aws4fetch";
import createClient from "openapi-fetch";
import type { components, paths } from "./openapi.js";
import { LinooneProblem } from "./problem.js";
import { type Bounds, defaultRetryPolicy, NetworkError, type RetryPolicy, withRetries } from "./retry.js";
import { batchKey, splitBatches } from "./batch.js";

/** A short URL as `GET /links/{token}` reads it back. */
export type Link = components["schemas"]["Link"];
/** A short URL's clicks, all time and per UTC day of a window. */
export type LinkStats = components["schemas"]["LinkStats"];

/** An issued short URL. */
export interface ShortURL {
  token: string;
  short_url: string;
  /** True when the Idempotency-Key already named this short URL: nothing was written. */
  replayed: boolean;
}

/** What became of one target URL of shortenBatch: issued, or its `error`. */
export interface BatchResult {
  target_url: string;
  token?: string;
  short_url?: string;
  replayed?: boolean;
  /** A LinooneProblem of this URL alone, or the error of the request that carried it. */
  error?: unknown;
}

/** What shortenOrFallback returns: the short URL, or the original when anything failed in time. */
export interface Fallback {
  /** The short URL when `shortened`, else the URL given. */
  url: string;
  shortened: boolean;
  token?: string;
  /** Why the URL given came back: a LinooneProblem, a network error, or the time budget's TimeoutError. */
  error?: unknown;
}

export interface ClientOptions {
  /** The management API, e.g. `https://abcdef1234.execute-api.us-east-1.amazonaws.com` or, locally, `http://127.0.0.1:8081`. */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** The SigV4 region; default the one an execute-api endpoint names, else `us-east-1` (what `linoone serve` verifies). */
  region?: string;
  /** Sends each signed request (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of network errors, 429 and 5xx (default 4 attempts, 200 ms to 5 s). */
  retry?: Partial<RetryPolicy>;
  /** Batch requests of one shortenBatch call in flight at once (default 4). */
  batchConcurrency?: number;
}

/** Bounds of one call: the caller's signal, and a time budget for the call with its retries. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ShortenOptions extends CallOptions {
  /**
   * The Idempotency-Key (1 to 255 printable ASCII characters but the comma): this
   * call made again, by any process, returns the short URL it issued. Without it
   * the key is random, made for the one call: its retries are safe, a second call
   * is another short URL.
   */
  idempotencyKey?: string;
}

export interface StatsOptions extends CallOptions {
  /** First UTC day, `YYYY-MM-DD` (default 29 days before `to`). */
  from?: string;
  /** Last UTC day, `YYYY-MM-DD` (default today). */
  to?: string;
}

const executeApiHost = /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/;
const maxKeyLength = 255;

/**
 * LinooneClient calls one Linoone deployment's management API: it signs every
 * request with SigV4 (service `execute-api`), retries network errors, 429 and
 * 5xx under one Idempotency-Key per call so that nothing is issued twice, and
 * throws every refusal as a LinooneProblem.
 */
export class LinooneClient {
  readonly #api: ReturnType<typeof createClient<paths>>;
  readonly #retry: RetryPolicy;
  readonly #batchConcurrency: number;

  constructor(opts: ClientOptions) {
    const endpoint = new URL(opts.endpoint);
    if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") {
      throw new TypeError(`endpoint ${opts.endpoint}: want an http or https URL`);
    }
    const region = opts.region ?? executeApiHost.exec(endpoint.hostname)?.[1] ?? "us-east-1";
    // aws4fetch only signs here: its own fetch would retry every 5xx ten times,
    // without an Idempotency-Key of ours.
    const signer = new AwsClient({
      accessKeyId: opts.accessKeyId,
      secretAccessKey: opts.secretAccessKey,
      sessionToken: opts.sessionToken,
      service: "execute-api",
      region,
      retries: 0,
    });
    const send = opts.fetch ?? ((request: Request) => fetch(request));
    this.#api = createClient<paths>({
      baseUrl: opts.endpoint.replace(/\/+$/, ""),
      fetch: async (request: Request) => {
        const signed = await signer.sign(request);
        try {
          return await send(new Request(signed, { signal: request.signal }));
        } catch (e) {
          throw request.signal.aborted ? e : new NetworkError(e);
        }
      },
    });
    this.#retry = { ...defaultRetryPolicy, ...opts.retry };
    this.#batchConcurrency = opts.batchConcurrency ?? 4;
    if (!(this.#retry.attempts >= 1 && this.#retry.baseDelayMs > 0 && this.#retry.maxDelayMs >= this.#retry.baseDelayMs)) {
      throw new RangeError("retry: want attempts ≥ 1 and 0 < baseDelayMs ≤ maxDelayMs");
    }
    if (!(this.#batchConcurrency >= 1)) throw new RangeError("batchConcurrency: want at least 1");
  }

  /**
   * shorten issues a short URL with `POST /shorten`. A refusal throws a
   * LinooneProblem (`kind` "target-invalid", "target-blocked", …). On a deployment
   * without an idempotency secret (503 idempotency-unavailable), a call without
   * `idempotencyKey` is sent once more without a key, and not retried.
   */
  async shorten(targetUrl: string, opts: ShortenOptions = {}): Promise<ShortURL> {
    const { key, generated } = callKey(opts.idempotencyKey);
    const bounds = callBounds(opts);
    const post = (key?: string) => () =>
      this.#api.POST("/shorten", {
        params: key === undefined ? {} : { header: { "Idempotency-Key": key } },
        body: { target_url: targetUrl },
        signal: bounds.signal,
      });
    let answer;
    try {
      answer = await withRetries("POST /shorten", this.#retry, bounds, post(key));
    } catch (e) {
      if (!generated || !(e instanceof LinooneProblem) || e.code !== "idempotency-unavailable") throw e;
      answer = await withRetries("POST /shorten (without Idempotency-Key)", { ...this.#retry, attempts: 1 }, bounds, post());
    }
    const u = answer.data;
    if (!u?.token || !u.short_url) throw unexpected("POST /shorten", answer.response);
    return { token: u.token, short_url: u.short_url, replayed: answer.response.status === 200 };
  }

  /**
   * shortenOrFallback is for a "copy short link" button: the short URL, or the URL
   * given when anything fails or the time budget (default 1 s) runs out. It never
   * throws; `shortened` says which URL came back.
   */
  async shortenOrFallback(url: string, opts: ShortenOptions = {}): Promise<Fallback> {
    const timeoutMs = opts.timeoutMs ?? 1000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const budget = new Promise<Fallback>((resolve) => {
      timer = setTimeout(
        () => resolve({ url, shortened: false, error: new DOMException(`no short URL within ${timeoutMs} ms`, "TimeoutError") }),
        timeoutMs,
      );
    });
    const attempt = this.shorten(url, { ...opts, timeoutMs }).then(
      (u): Fallback => ({ url: u.short_url, shortened: true, token: u.token }),
      (error: unknown): Fallback => ({ url, shortened: false, error }),
    );
    try {
      return await Promise.race([attempt, budget]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * shortenBatch issues short URLs with `POST /shorten/batch` and returns one
   * result per URL, in input order. It sends batches of up to 1,000 URLs (fewer
   * where long URLs would take a body past the API's 4 MiB), `batchConcurrency` at
   * a time, each retried like shorten under a key of its own: the call's key for the
   * first batch, the key and `@` and the index of its first URL for the others. It
   * throws only for arguments it cannot send: a URL the API refuses, or a request
   * that failed whole (the batches after it are then not sent), is that result's
   * `error`.
   */
  async shortenBatch(targetUrls: readonly string[], opts: ShortenOptions = {}): Promise<BatchResult[]> {
    const results: BatchResult[] = targetUrls.map((target_url) => ({ target_url }));
    const { key, generated } = callKey(opts.idempotencyKey);
    const parts = splitBatches(targetUrls);
    const last = parts[parts.length - 1];
    if (last && batchKey(key, last.start).length > maxKeyLength) {
      throw new RangeError(`idempotencyKey leaves no room for the suffix of batch ${parts.length} (at most ${maxKeyLength} characters in all)`);
    }
    const bounds = callBounds(opts);
    let failure: unknown;
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < parts.length; i = next++) {
        const p = parts[i]!;
        const out = results.slice(p.start, p.end);
        if (failure !== undefined || bounds.signal?.aborted) {
          const cause = failure ?? bounds.signal?.reason;
          setError(out, new Error("not sent after an earlier batch failed", { cause }));
          continue;
        }
        try {
          await this.#batch(batchKey(key, p.start), generated, targetUrls.slice(p.start, p.end), out, bounds);
        } catch (e) {
          failure ??= e;
          setError(out, e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#batchConcurrency, parts.length) }, worker));
    return results;
  }

  async #batch(key: string, generated: boolean, targets: string[], out: BatchResult[], bounds: Bounds): Promise<void> {
    const post = (key?: string) => () =>
      this.#api.POST("/shorten/batch", {
        params: key === undefined ? {} : { header: { "Idempotency-Key": key } },
        body: { items: targets.map((target_url) => ({ target_url })) },
        signal: bounds.signal,
      });
    let answer;
    try {
      answer = await withRetries("POST /shorten/batch", this.#retry, bounds, post(key));
    } catch (e) {
      if (!generated || !(e instanceof LinooneProblem) || e.code !== "idempotency-unavailable") throw e;
      answer = await withRetries("POST /shorten/batch (without Idempotency-Key)", { ...this.#retry, attempts: 1 }, bounds, post());
    }
    const items = answer.data?.results;
    if (!items || items.length !== targets.length || items.some((r) => !(r.token && r.short_url) && !r.problem)) {
      throw unexpected("POST /shorten/batch", answer.response);
    }
    items.forEach((r, i) => {
      const o = out[i]!;
      if (r.problem) {
        o.error = new LinooneProblem(r.problem);
        return;
      }
      Object.assign(o, { token: r.token, short_url: r.short_url, replayed: r.replayed === true });
    });
  }

  /** inspect reads where a token goes with `GET /links/{token}`, without a visit; an unknown token throws a "not-found" LinooneProblem. */
  async inspect(token: string, opts: CallOptions = {}): Promise<Link> {
    const bounds = callBounds(opts);
    const { data, response } = await withRetries(`GET /links/${token}`, this.#retry, bounds, () =>
      this.#api.GET("/links/{token}", { params: { path: { token } }, signal: bounds.signal }),
    );
    if (!data?.token || !data.target_url) throw unexpected(`GET /links/${token}`, response);
    return data;
  }

  /**
   * stats reads a token's clicks with `GET /links/{token}/stats`: all time and per
   * UTC day of a window (default the last 30 days). A click reaches the graph
   * through the bus, so one made a moment ago may not be counted yet.
   */
  async stats(token: string, opts: StatsOptions = {}): Promise<LinkStats> {
    const bounds = callBounds(opts);
    const query = { ...(opts.from && { from: opts.from }), ...(opts.to && { to: opts.to }) };
    const { data, response } = await withRetries(`GET /links/${token}/stats`, this.#retry, bounds, () =>
      this.#api.GET("/links/{token}/stats", { params: { path: { token }, query }, signal: bounds.signal }),
    );
    if (!data?.token || !Array.isArray(data.by_day)) throw unexpected(`GET /links/${token}/stats`, response);
    return data;
  }
}

/** callKey is a call's Idempotency-Key: the caller's, or a random one, which generated says. */
function callKey(key: string | undefined): { key: string; generated: boolean } {
  if (key !== undefined && key !== "") return { key, generated: false };
  return { key: `linoone-ts-${crypto.randomUUID()}`, generated: true };
}

/** callBounds joins the caller's signal and the call's time budget. */
function callBounds(opts: CallOptions): Bounds {
  if (opts.timeoutMs === undefined) return { signal: opts.signal };
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  return {
    signal: opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout,
    deadline: Date.now() + opts.timeoutMs,
  };
}

function setError(out: BatchResult[], error: unknown): void {
  for (const o of out) o.error = error;
}

/** unexpected is the error of a success answer that is not what openapi.yaml says, as a proxy might send. */
function unexpected(call: string, response: Response): Error {
  return new Error(`${call}: unexpected answer ${response.status}: is the endpoint Linoone's management API?`);
}
