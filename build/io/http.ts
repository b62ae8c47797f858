/**
 * One GET with a timeout, retried with jittered exponential backoff. Node 20's global fetch; the timeout covers the
 * headers and the whole body, so a server that stalls half-way is cut off like one that never answers.
 */
export type RetryPolicy = {
  /** Attempts after the first. */
  retries: number;
  /** Base and cap of the backoff, in milliseconds. */
  baseDelayMs: number;
  maxDelayMs: number;
};

export type HttpOptions = RetryPolicy & {
  timeoutMs: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told about each failed attempt that will be retried. */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
};

type Answer = { status: 304; headers: Headers } | { status: 200; headers: Headers; body: Uint8Array };
export type HttpResult = Answer & { attempts: number };

export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** "Full jitter": a uniform delay up to the capped exponential step, so many clients do not retry in step. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(random() * ceiling);
}

/** 408, 425, 429 and 5xx are worth another try; other statuses will not change by asking again. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

export async function getWithRetry(url: string, headers: Record<string, string>, options: HttpOptions): Promise<HttpResult> {
  const doSleep = options.sleep ?? sleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return { ...(await getOnce(url, headers, options)), attempts: attempt + 1 };
    } catch (err) {
      const error = err instanceof HttpError ? err : new HttpError(describe(err, options.timeoutMs), true);
      if (!error.retryable || attempt >= options.retries) {
        const tries = attempt + 1;
        throw new HttpError(`${error.message}${tries > 1 ? ` (after ${tries} attempts)` : ''}`, false);
      }
      const delayMs = Math.min(options.maxDelayMs, Math.max(error.retryAfterMs ?? 0, backoffDelay(attempt, options, options.random)));
      options.onRetry?.({ url, attempt: attempt + 1, delayMs, reason: error.message });
      await doSleep(delayMs);
    }
  }
}

async function getOnce(url: string, headers: Record<string, string>, options: HttpOptions): Promise<Answer> {
  const doFetch = options.fetch ?? fetch;
  const res = await doFetch(url, { headers, signal: AbortSignal.timeout(options.timeoutMs), redirect: 'follow' });
  if (res.status === 304) {
    await res.body?.cancel();
    return { status: 304, headers: res.headers };
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new HttpError(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, isRetryableStatus(res.status), retryAfter(res.headers));
  }
  const body = new Uint8Array(await res.arrayBuffer());
  const declared = res.headers.get('content-length');
  // fetch undoes a Content-Encoding, after which Content-Length no longer describes the body.
  if (declared !== null && !res.headers.has('content-encoding') && Number(declared) !== body.byteLength) {
    throw new HttpError(`truncated response: ${body.byteLength} of ${declared} bytes`, true);
  }
  return { status: 200, headers: res.headers, body };
}

function retryAfter(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** A plain sentence for a network failure: undici hides the useful part in `cause`. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no complete answer within ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message} (${cause})` : String(e?.message ?? err);
}
