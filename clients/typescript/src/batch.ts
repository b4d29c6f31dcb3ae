/** The API's bounds on one `POST /shorten/batch` (openapi.yaml). */
export const maxBatchItems = 1000;
export const maxBatchBodyBytes = 4 * 1024 * 1024;

/** The targets [start, end) of one batch. */
export interface Span {
  start: number;
  end: number;
}

const encoder = new TextEncoder();

/**
 * splitBatches cuts targets into batches of at most 1,000 whose JSON body, as
 * JSON.stringify writes it, stays within 4 MiB: long non-ASCII targets take up to
 * three bytes a character. A target too long for any body goes alone, for the API
 * to refuse. The cut depends on the targets alone, so the same call made again
 * sends the same batches under the same keys.
 */
export function splitBatches(targets: readonly string[]): Span[] {
  const envelope = '{"items":[]}'.length;
  const parts: Span[] = [];
  let start = 0;
  let size = envelope;
  targets.forEach((t, i) => {
    const n = '{"target_url":}'.length + encoder.encode(JSON.stringify(t)).length;
    if (i > start && (i - start === maxBatchItems || size + 1 + n > maxBatchBodyBytes)) {
      parts.push({ start, end: i });
      start = i;
      size = envelope;
    }
    if (i > start) size++; // the comma
    size += n;
  });
  if (start < targets.length) parts.push({ start, end: targets.length });
  return parts;
}

/** batchKey is the Idempotency-Key of the batch whose first URL is the call's start-th: the call's own for the first. */
export function batchKey(key: string, start: number): string {
  return start === 0 ? key : `${key}@${start}`;
}
