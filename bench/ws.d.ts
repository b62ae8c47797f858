/** The part of ws's API that bench/lib/worker.ts uses to reach workerd's inspector (ws comes with miniflare; Node 20 has no WebSocket client). */
declare module 'ws' {
  export class WebSocket {
    constructor(url: string);
    once(event: 'open', listener: () => void): this;
    once(event: 'error', listener: (err: Error) => void): this;
    on(event: 'message', listener: (data: Buffer) => void): this;
    send(data: string): void;
    close(): void;
  }
}
