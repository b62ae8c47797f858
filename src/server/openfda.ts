import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerOpenFda, type Endpoint, type OpenFdaDeps } from '../openfda/answer.ts';
import type { Snapshot } from '../snapshot/index.ts';
import type { Logger } from './log.ts';
import { sendBytes } from './respond.ts';

/**
 * GET and HEAD /device/510k.json and /device/classification.json on the Node server: the request's URL (with the
 * Host it was sent to, for the `Link` header) to src/openfda/answer.ts, and its answer sent as every JSON answer is.
 */
export function openFdaHandler(
  endpoint: Endpoint,
  deps: OpenFdaDeps & { current: () => Snapshot | null; logger: Logger },
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const host = req.headers.host ?? 'localhost';
    const url = new URL(req.url ?? '/', `http://${/^[\w.:[\]-]+$/.test(host) ? host : 'localhost'}`);
    const answer = await answerOpenFda(deps, deps.current(), endpoint, url);
    if (answer.failure !== undefined) {
      const cause = answer.failure;
      deps.logger.error('internal error', { method: req.method, path: url.pathname, stack: cause instanceof Error ? cause.stack : String(cause) });
    }
    await sendBytes(req, res, answer.status, answer.body, answer.headers);
  };
}
