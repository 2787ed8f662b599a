// A loopback decision receiver for bench/webhook.bench.mjs, in its own process so it does not share the
// benchmark's event loop. Prints its port on stdout.
import { createServer } from 'node:http';

const answer = JSON.stringify({ decision: 'allow' });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
