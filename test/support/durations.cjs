// Mocha's spec reporter, plus the wall-clock seconds each spec file took (its hooks included:
// from its first suite starting to the next file's), written as JSON to TEST_DURATIONS_OUT when
// the run ends. `npm test` (tooling/test.ts) balances its parallel runs by these figures
// (test/durations.json). CommonJS because mocha loads reporters with require().
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_SUITE_BEGIN, EVENT_RUN_END } = Mocha.Runner.constants;
const root = path.resolve(__dirname, '..', '..');

class SpecWithDurations extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const out = process.env.TEST_DURATIONS_OUT;
    if (!out) return;
    const seconds = {};
    let file = null;
    let since = 0;
    const close = () => {
      if (file) seconds[path.relative(root, file)] = Math.round((Date.now() - since) / 100) / 10;
    };
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (!suite.file || suite.file === file) return;
      close();
      file = suite.file;
      since = Date.now();
    });
    runner.once(EVENT_RUN_END, () => {
      close();
      fs.writeFileSync(out, JSON.stringify(seconds));
    });
  }
}

module.exports = SpecWithDurations;
