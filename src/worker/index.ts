import { readWebBody } from '../api/body.ts';
import { createDispatcher, notConfigured, type Dispatcher } from '../api/dispatch.ts';
import { sourceStateOf } from '../api/source-state.ts';
import { CorruptFile, UnavailableFile } from '../snapshot/index.ts';
import { assetOf, noAnswer, responseOf } from './respond.ts';
import { createService, log, type Env } from './service.ts';
import { snapshotFile } from './snapshot-files.ts';

/**
 * The API as a Cloudflare Worker: the dispatcher of src/api/dispatch.ts over a Web Request, answered by the same code
 * as the Node server (src/api, src/operations, src/search, src/snapshot) over a snapshot in the Worker's static
 * assets or in an R2 bucket (service.ts). What is the Worker's own: the body read from the request's stream, answers
 * as Responses (respond.ts), the snapshot's files from R2, and the static assets (the page) for any other path.
 */

/** One per isolate and configuration: bindings and variables are the same for every request of a deployment. */
let service: { env: Env; dispatcher: Dispatcher<Request, Response>; settle: () => void } | null = null;

function serviceOf(env: Env): { dispatcher: Dispatcher<Request, Response>; settle: () => void } {
  if (service?.env === env) return service;
  const { watch, deps, settle } = createService(env);
  const dispatcher = createDispatcher<Request, Response>({
    deps,
    lendsChunks: false,
    snapshot: () => watch.current(Date.now()),
    problem: () => null,
    io: (request) => ({ body: () => readWebBody(request), turn: (work) => work(), onOperation: () => {} }),
    own: {
      // Static assets serve their own files; only a snapshot in R2 is read here.
      'snapshot-files': (request, rest, tools) => (env.SNAPSHOT_BUCKET ? snapshotFile(request, rest, watch, tools) : null),
    },
    send: (_request, answer) => responseOf(answer, watch),
    gone: noAnswer,
    cut: noAnswer,
    fallback: (request) => assetOf(env.ASSETS, request),
    logError: (message, fields) => log('error', message, fields),
    onFailure: (cause) => {
      if (cause instanceof UnavailableFile) log('error', 'snapshot file cannot be read; it is not served', { reason: cause.message });
      // A file that is gone or changed may belong to a newer publication: read the manifest on the next request.
      if (cause instanceof UnavailableFile || cause instanceof CorruptFile) watch.recheckSoon();
    },
  });
  service = { env, dispatcher, settle };
  return service;
}

// The Workers runtime finds the handlers on the default export, and refuses any other export of the entry module.
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    let dispatcher: Dispatcher<Request, Response>;
    let settle: () => void;
    try {
      ({ dispatcher, settle } = serviceOf(env));
    } catch (err) {
      log('error', 'the Worker is not configured', { reason: err instanceof Error ? err.message : String(err) });
      const unconfigured = { now: () => new Date(), sourceState: (_: unknown, now: Date) => sourceStateOf({ manifest: null, sync: null, now, maxAgeHours: 1 }) };
      return responseOf(notConfigured(unconfigured, request.method === 'HEAD'), null);
    }
    const url = new URL(request.url);
    const response = await dispatcher.dispatch(request, { method: request.method, url: `${url.pathname}${url.search}`, origin: url.origin, header: (name) => request.headers.get(name) ?? undefined });
    settle();
    return response;
  },
};
