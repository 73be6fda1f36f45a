import assert from 'node:assert/strict';
import { launch, type LaunchOptions } from '../../tooling/launcher';
import { freePort, portAcceptsConnections } from '../../tooling/ports';

// tooling/launcher.ts, the one way the tests, benches, `npm start` and the cluster start a
// process: readiness by line, port and IPC message; a stop that escalates to SIGKILL after its
// grace; failures that carry the process's last lines; restart. Small Node scripts stand in for
// the service's processes (their own readiness is exercised by every suite that starts them).

const node = (script: string): LaunchOptions['command'] => [process.execPath, '-e', script];

describe('process launcher (tooling/launcher.ts)', function () {
  this.timeout(30_000);

  it('is ready at the matching line, keeps the last lines, and stops with SIGTERM', async () => {
    const p = await launch({
      command: node(`console.log('warming'); setTimeout(() => console.log('ready on 1'), 200); setInterval(() => {}, 1000);`),
      ready: { line: /^ready on \d+$/ },
    });
    assert.ok(p.running());
    assert.deepEqual(p.tail, ['warming', 'ready on 1']);
    const exit = await p.stop();
    assert.deepEqual([exit.code, exit.signal], [null, 'SIGTERM']);
    assert.equal(p.running(), false);
  });

  it('SIGKILLs a process that ignores SIGTERM once the grace is over', async () => {
    const p = await launch({
      command: node(`process.on('SIGTERM', () => console.log('ignored')); console.log('up'); setInterval(() => {}, 1000);`),
      ready: { line: /^up$/ },
    });
    const asked = Date.now();
    const exit = await p.stop(400);
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(Date.now() - asked >= 400, 'waited out the grace first');
    assert.ok(p.tail.includes('ignored'), 'the SIGTERM reached it');
  });

  it('fails with the last output lines when the process exits before it is ready', async () => {
    await assert.rejects(
      launch({ name: 'doomed', command: node(`console.error('missing DATABASE_URL'); process.exit(3);`), ready: { line: /listening/ } }),
      (err: Error) => /^doomed exited \(code 3\) before it was ready/.test(err.message) && err.message.includes('missing DATABASE_URL'),
    );
  });

  it('stops a process that is not ready in time, and says what it waited for', async () => {
    let pid = 0;
    await assert.rejects(
      launch({
        name: 'slow',
        command: node(`console.log(process.pid); setInterval(() => {}, 1000);`),
        ready: { line: /never/ },
        readyTimeoutMs: 500,
        onLine: (l) => (pid = Number(l)),
      }),
      /slow printed no line matching \/never\/ within 0.5 s/,
    );
    assert.ok(pid > 0);
    assert.throws(() => process.kill(pid, 0), 'the process is gone');
  });

  it('waits for a port and an IPC message, and restarts as a new process ready the same way', async () => {
    const port = await freePort();
    const p = await launch({
      command: node(
        `require('node:net').createServer().listen(${port}, '127.0.0.1', () => process.send({ up: true })); setInterval(() => {}, 1000);`,
      ),
      ipc: true,
      ready: [{ port }, { message: (m) => m?.up === true }],
    });
    assert.equal(await portAcceptsConnections(port), true);
    const again = await p.restart();
    try {
      assert.notEqual(again.pid, p.pid);
      assert.equal(p.running(), false);
      assert.equal(await portAcceptsConnections(port), true);
    } finally {
      await again.stop();
    }
  });
});
