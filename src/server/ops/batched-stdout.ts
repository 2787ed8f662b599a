/**
 * The server log's destination: the lines logged in one turn of the event loop go to stdout in one
 * synchronous write at the end of that turn (`setImmediate`), instead of one write each — at hundreds of
 * requests a second, one write per request line was most of what logging cost (bench:server, issue 14).
 * Lines still go out in order and at once after the work that logged them; an error line, a full buffer
 * and `process.exit` flush at once, so nothing is lost when the process exits.
 */
import pino from 'pino';

/** Flushed at once beyond this many characters. */
const MAX_BUFFERED = 64 * 1024;

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
  const onTurnEnd = () => {
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
        setImmediate(onTurnEnd);
      }
    },
    flushSync,
  };
}
