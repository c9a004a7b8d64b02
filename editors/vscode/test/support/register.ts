/**
 * `node --require out/test/support/register.js`: `require('vscode')` and
 * `require('vscode-languageclient/node')` get the stubs, so the extension's
 * modules load in plain Node.
 */

import Module = require('node:module');

const stubs: Record<string, string> = {
  vscode: require.resolve('./vscode'),
  'vscode-languageclient/node': require.resolve('./languageclient'),
};

type Resolve = (request: string, ...rest: unknown[]) => string;
const moduleWithResolve = Module as unknown as { _resolveFilename: Resolve };
const original = moduleWithResolve._resolveFilename;
moduleWithResolve._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  return stubs[request] ?? original.call(this, request, ...rest);
};
