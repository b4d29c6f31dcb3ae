export {
  LinooneClient,
  type BatchResult,
  type CallOptions,
  type ClientOptions,
  type Fallback,
  type Link,
  type LinkStats,
  type ShortenOptions,
  type ShortURL,
  type StatsOptions,
} from "./client.js";
export { LinooneProblem, PROBLEM_TYPE_PREFIX, type ProblemKind } from "./problem.js";
export type { RetryPolicy } from "./retry.js";
export type { components, paths } from "./openapi.js";
