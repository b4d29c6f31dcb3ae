/**
 * The families of refusals a producer branches on, as the Go client's errors.Is
 * sentinels name them (ErrTargetInvalid is "target-invalid", …).
 */
export type ProblemKind =
  | "target-invalid" // a target-url-* rule of status 400: sent again, it fails again
  | "target-blocked" // the operator's deny list (target-url-blocked, 422)
  | "not-found" // no short URL has this token
  | "unauthorized" // the signature was refused: credentials, region or endpoint
  | "throttled" // 429, after the retries
  | "unavailable" // any 5xx, after the retries: a later call may succeed
  | "idempotency-key-reused" // the key already names a short URL with another target
  | "invalid-request" // refused whatever the target: an invalid key or stats window, a body a proxy changed
  | "other";

/** PROBLEM_TYPE_PREFIX starts every problem type URN Linoone sends. */
export const PROBLEM_TYPE_PREFIX = "urn:linoone:problem:";

const invalidRequestCodes = new Set(["invalid-request", "unknown-field", "idempotency-key-invalid", "body-too-large", "unsupported-media-type"]);

/**
 * A refusal of the API: the RFC 9457 problem of its application/problem+json
 * answer or, where something in front of Linoone answered (API Gateway's own
 * `{"message": …}`), the status with that message as `detail` and no `type`.
 */
export class LinooneProblem extends Error {
  /** The URN naming the rule, e.g. `urn:linoone:problem:target-url-scheme`; "" when Linoone did not answer. */
  readonly type: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** The family of the refusal. */
  readonly kind: ProblemKind;

  constructor(p: { type?: string; status: number; title?: string; detail?: string }) {
    const type = p.type ?? "";
    const title = p.title ?? "";
    const detail = p.detail ?? "";
    super(type ? `${p.status} ${title}: ${detail} (${type})` : `${p.status} ${title}: ${detail}`);
    this.name = "LinooneProblem";
    this.type = type;
    this.status = p.status;
    this.title = title;
    this.detail = detail;
    this.kind = problemKind(type, p.status);
  }

  /** The type without its `urn:linoone:problem:` prefix, e.g. `target-url-scheme`; "" when it is not Linoone's. */
  get code(): string {
    return this.type.startsWith(PROBLEM_TYPE_PREFIX) ? this.type.slice(PROBLEM_TYPE_PREFIX.length) : "";
  }
}

/** problemKind is the family of a problem of this type and status. */
export function problemKind(type: string, status: number): ProblemKind {
  const code = type.startsWith(PROBLEM_TYPE_PREFIX) ? type.slice(PROBLEM_TYPE_PREFIX.length) : "";
  if (code === "target-url-blocked") return "target-blocked";
  if (code.startsWith("target-url-")) return "target-invalid";
  if (code === "not-found") return "not-found";
  if (code === "signature-invalid" || (code === "" && (status === 401 || status === 403))) return "unauthorized";
  if (code === "idempotency-key-reused") return "idempotency-key-reused";
  if (invalidRequestCodes.has(code) || code.startsWith("stats-")) return "invalid-request";
  if (status === 429) return "throttled";
  if (status >= 500) return "unavailable";
  return "other";
}

/** problemOf reads the problem of an answer that is not a success, from its body as openapi-fetch parsed it. */
export function problemOf(status: number, statusText: string, body: unknown): LinooneProblem {
  if (isRecord(body) && typeof body.type === "string" && body.type !== "") {
    return new LinooneProblem({
      type: body.type,
      status: typeof body.status === "number" ? body.status : status,
      title: typeof body.title === "string" ? body.title : statusText,
      detail: typeof body.detail === "string" ? body.detail : "",
    });
  }
  const detail = isRecord(body) && typeof body.message === "string" ? body.message : JSON.stringify(body ?? "").slice(0, 200);
  return new LinooneProblem({ status, title: statusText, detail });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}
