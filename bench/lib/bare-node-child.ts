/**
 * Node's own floor for a lookup: a bare node:http server that reads the request body and answers every POST with
 * the bytes of one precomputed file (meta.json), with the same JSON headers our server sends. What our server does
 * beyond this (routing, validation, the envelope, the log line) is the difference between the two.
 *
 *   node bench/lib/bare-node-child.ts PORT FILE     (run through tsx like the other children)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, file] = process.argv.slice(2);
const body = readFileSync(file!);
createServer({ keepAliveTimeout: 5000 }, (req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Access-Control-Allow-Origin': '*',
      'Content-Length': body.length,
    });
    res.end(body);
  });
}).listen(Number(port), '127.0.0.1');
