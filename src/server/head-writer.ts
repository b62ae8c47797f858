import { STATUS_CODES } from 'node:http';
import { jsonHeaders } from '../api/json-headers.ts';
import { KEEP_ALIVE_MS } from './config.ts';
import type { Encoding } from './media.ts';

/**
 * The head writer: the headers of a JSON answer (`answerHeaders`, in the order they are sent), which respond.ts hands
 * to Node's writeHead, and the HTTP head the fast lane writes itself with them, as Node's HTTP server writes it for
 * `writeHead(status, headers)` (the headers in order, then Date and Connection): one list of headers, so both paths
 * send the same head.
 */

/** A JSON answer's headers (the contract's section 1) with its own, its Content-Length and its coding. */
export function answerHeaders(length: number, encoding: Encoding, own: Readonly<Record<string, string>>): Record<string, string | number> {
  return jsonHeaders(length, encoding, own);
}

let dateSecond = -1;
let dateText = '';
/** The Date header, made once a second (as Node and nginx do). */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}


/** What Node's HTTP server says of a connection it keeps open. */
const KEEP_ALIVE = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(KEEP_ALIVE_MS / 1000)}\r\n`;

/**
 * The head of a 200 answer sent as it is, up to its Content-Length's value and from after it to the Date line: the
 * headers of `answerHeaders` for an answer with none of its own, made once from it.
 */
const PLAIN_200 = (() => {
  const lines = Object.entries(answerHeaders(0, 'identity', {})).map(([name, value]) => `${name}: ${name === 'Content-Length' ? '\0' : String(value)}\r\n`);
  const [before, after] = `HTTP/1.1 200 ${STATUS_CODES[200]}\r\n${lines.join('')}`.split('\0') as [string, string];
  return { before, after };
})();

/** The head of a 200 answer with no headers of its own and no coding: the common case, made from PLAIN_200. */
export function plainHead(length: number, close: boolean): string {
  return `${PLAIN_200.before}${length}${PLAIN_200.after}Date: ${httpDate()}\r\n${close ? 'Connection: close\r\n' : KEEP_ALIVE}\r\n`;
}

/** The head of an answer with these headers, as Node writes it for `writeHead(status, headers)`: Date and Connection last. */
export function headText(status: number, headers: Readonly<Record<string, string | number>>, close: boolean): { head: string; close: boolean } {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  for (const name in headers) {
    const value = String(headers[name]);
    if (name.toLowerCase() === 'connection') close ||= value.toLowerCase() === 'close';
    else head += `${name}: ${value}\r\n`;
  }
  head += `Date: ${httpDate()}\r\n${close ? 'Connection: close\r\n' : KEEP_ALIVE}\r\n`;
  return { head, close };
}

