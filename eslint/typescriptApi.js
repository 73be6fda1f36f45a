// typescript-eslint parses with TypeScript's JavaScript API, which the native TypeScript 7
// compiler the project type-checks with no longer ships. eslint/typescript-api holds TypeScript
// 6.0 (nested, so its `tsc` never shadows the project's); this hook hands it to the linter's
// packages when they ask for `typescript`. Import it before typescript-eslint.
import Module, { createRequire } from 'node:module';

const api = createRequire(new URL('./typescript-api/package.json', import.meta.url)).resolve('typescript');
const LINTER_PACKAGES = /[\\/]node_modules[\\/](typescript-eslint|@typescript-eslint[\\/][^\\/]+|ts-api-utils)[\\/]/;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === 'typescript' && parent?.filename && LINTER_PACKAGES.test(parent.filename)) return api;
  return resolve.call(this, request, parent, ...rest);
};
