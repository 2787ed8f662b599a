/**
 * The server log's destination: the lines logged within a few milliseconds go to stdout in one synchronous
 * write, instead of one write each: a synchronous write per request line would put a system call on every
 * request's path. Lines still go out in order, at most `FLUSH_AFTER_MS`
 * late; an error line, a full buffer and `process.exit` flush at once, so nothing is lost when the process
 * exits.
 */
import pino from 'pino';

/** Flushed at once beyond this many characters. */
const MAX_BUFFERED = 64 * 1024;
/** How long a line may wait for others to share its write. */
const FLUSH_AFTER_MS = 10;

export interface BatchedDestination extends pino.DestinationStream {
  /** Writes what is buffered now. */
  flushSync(): void;
}

export function batchedStdout(target: pino.DestinationStream = pino.destination({ dest: 1, sync: true })): BatchedDestination {
  let buffered = '';
  let scheduled = false;
  const flushSync = () => {
    if (buffered === '') return;
    const chunk = buffered;
    buffered = '';
    process.removeListener('exit', flushSync);
    target.write(chunk);
  };
  const onTimer = () => {
    scheduled = false;
    flushSync();
  };
  return {
    write(line: string) {
      // Listening for the exit only while something waits: a process may build many loggers (tests).
      if (buffered === '') process.on('exit', flushSync);
      buffered += line;
      if (buffered.length >= MAX_BUFFERED) flushSync();
      else if (!scheduled) {
        scheduled = true;
        // Never what keeps the process alive: at its exit the buffer is flushed anyway.
        setTimeout(onTimer, FLUSH_AFTER_MS).unref();
      }
    },
    flushSync,
  };
}
