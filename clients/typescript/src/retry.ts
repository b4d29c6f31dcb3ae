import { LinooneProblem, problemOf } from "./problem.js";

/** How often and how far apart a request is sent. */
export interface RetryPolicy {
  /** Attempts in all, 1 for no retry (default 4). */
  attempts: number;
  /** The first backoff (default 200 ms); each next one doubles, up to maxDelayMs. */
  baseDelayMs: number;
  /** The longest backoff (default 5 s). */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { attempts: 4, baseDelayMs: 200, maxDelayMs: 5000 };

/** The longest Retry-After the client waits for: a throttle that asks more is the caller's to handle. */
export const maxRetryAfterMs = 60_000;

/**
 * NetworkError is an attempt that got no answer: the request may or may not have
 * reached the server. The fetch that the client gives openapi-fetch throws it, so
 * that it is told apart from an answer it could not read.
 */
export class NetworkError extends Error {
  constructor(cause: unknown) {
    super(`no answer: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "NetworkError";
  }
}

/** One attempt's outcome, as openapi-fetch returns it. */
export interface Attempt<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** What bounds a call: the caller's signal and the deadline of its time budget (ms since the epoch). */
export interface Bounds {
  signal?: AbortSignal;
  deadline?: number;
}

/**
 * backoff is the wait before attempt n+1 after n failed without a Retry-After:
 * between half and all of min(maxDelayMs, baseDelayMs·2ⁿ⁻¹), so that clients that
 * failed together do not retry together.
 */
export function backoff(p: RetryPolicy, n: number): number {
  const d = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (n - 1));
  return d / 2 + Math.random() * (d / 2);
}

/** retryAfterMs is the wait a Retry-After header asks for, in seconds or as an HTTP date; 0 when none. */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  const v = (value ?? "").trim();
  if (v === "") return 0;
  if (/^-?\d+$/.test(v)) return Math.max(Number(v), 0) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? 0 : Math.max(t - now, 0);
}

/**
 * withRetries sends a request until it gets an answer not worth another attempt,
 * at most policy.attempts times: no answer, a 429 or a 5xx is retried after a
 * backoff or the answer's Retry-After, unless the wait would outlast the deadline
 * or the signal ends it. It returns a success's data and response, or throws the
 * last error: a LinooneProblem for an answer, the NetworkError otherwise.
 */
export async function withRetries<T>(
  call: string,
  policy: RetryPolicy,
  bounds: Bounds,
  send: () => Promise<Attempt<T>>,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void> = delay,
): Promise<{ data: T | undefined; response: Response }> {
  for (let n = 1; ; n++) {
    let last: LinooneProblem | NetworkError;
    let wait = 0;
    try {
      const { data, error, response } = await send();
      if (response.ok) return { data, response };
      last = problemOf(response.status, response.statusText, error);
      wait = retryAfterMs(response.headers.get("Retry-After"));
    } catch (e) {
      if (!(e instanceof NetworkError) || bounds.signal?.aborted) throw e;
      last = e;
    }
    if (!retryable(last)) throw last;
    if (n >= policy.attempts) throw annotate(last, `${call}: sent ${n} times`);
    if (wait === 0) wait = backoff(policy, n);
    else if (wait > maxRetryAfterMs) throw annotate(last, `${call}: Retry-After ${wait} ms is longer than the client waits`);
    if (bounds.deadline !== undefined && Date.now() + wait > bounds.deadline) {
      throw annotate(last, `${call}: sent ${n} times, no time left for another`);
    }
    await sleep(wait, bounds.signal);
  }
}

/** retryable: no answer, a throttle or a server error, but for a 503 that lasts until an operator acts. */
function retryable(e: LinooneProblem | NetworkError): boolean {
  if (e instanceof NetworkError) return true;
  return e.status === 429 || (e.status >= 500 && e.code !== "idempotency-unavailable");
}

/** annotate says, on the error itself, how the retries ended; its class and fields stay. */
function annotate<E extends Error>(e: E, note: string): E {
  e.message = `${e.message} (${note})`;
  return e;
}

/** delay waits ms, or rejects with the signal's reason once it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
