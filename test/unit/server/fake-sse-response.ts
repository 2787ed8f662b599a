/** An Express response as the SSE loops use it: records what was written, can go away or fall behind. */
import { EventEmitter } from 'node:events';

export class FakeResponse extends EventEmitter {
  chunks: string[] = [];
  headers: Record<string, string> = {};
  statusCode = 0;
  writableEnded = false;
  destroyed = false;
  writableNeedDrain = false;
  writableLength = 0;
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.chunks.push(chunk);
    return true;
  }
  end() {
    this.writableEnded = true;
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
  events(): { event: string; data: any }[] {
    return this.chunks
      .filter((c) => c.includes('event: '))
      .map((c) => ({ event: /event: (\w+)/.exec(c)![1]!, data: JSON.parse(/data: (.*)/.exec(c)![1]!) }));
  }
  heartbeats(): number {
    return this.chunks.filter((c) => c === ': keep-alive\n\n').length;
  }
}
